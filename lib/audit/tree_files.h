// The files of the project's tree (lib/audit/tree_store.h) at the byte
// level: their names, the entry records, and the reads the reader, the
// appender and its recovery share. Internal to lib/audit.
#ifndef GARUDA_LIB_AUDIT_TREE_FILES_H_
#define GARUDA_LIB_AUDIT_TREE_FILES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/audit/line_format.h"
#include "lib/crypto/merkle.h"

namespace garuda {

inline constexpr absl::string_view kLockFile = "lock";
inline constexpr absl::string_view kLogsFile = "logs";
inline constexpr absl::string_view kEntriesFile = "entries";
inline constexpr absl::string_view kCheckpointFile = "checkpoint";
inline constexpr absl::string_view kDurableFile = "durable";
// Per log, how far the tree covers it (TreeAppender: bounds what an open
// reads of tree/entries).
inline constexpr absl::string_view kCoveredFile = "covered";
// "<20 digits> <44 base64 characters>\n"
inline constexpr size_t kDurableMarkBytes = 20 + 1 + 44 + 1;
// tree/logs holds one short name per session; far below this.
inline constexpr size_t kMaxLogsFileBytes = 64 << 20;
// A line the auditor wrote is at most kMaxAuditLineBytes; a window of twice
// that always holds a whole line and a read.
inline constexpr size_t kLineWindowBytes = 2 * kMaxAuditLineBytes + 2;

// Big-endian integers of `bytes` bytes, as tree/entries stores them
// (inline: the appender writes one record per line).
inline void StoreBigEndian(uint64_t value, int bytes, char* out) {
  for (int i = 0; i < bytes; ++i) {
    out[i] = static_cast<char>(value >> (8 * (bytes - 1 - i)));
  }
}

inline uint64_t GetBigEndian(const char* data, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value = value << 8 | static_cast<uint8_t>(data[i]);
  return value;
}

absl::StatusOr<uint64_t> FileSize(int fd, const std::string& path);
// Exactly `size` bytes at `offset`; DATA_LOSS when the file ends before.
absl::Status PreadExact(int fd, void* buffer, size_t size, uint64_t offset,
                        const std::string& path);

// The stored hashes of the first `size` leaves of tree/entries at `fd`;
// `bytes_read` (when given) counts the bytes they read.
StoredHashReader HashReaderOf(int fd, std::string path, uint64_t size,
                              uint64_t* bytes_read = nullptr);

// The number of whole entries in `bytes` of tree/entries (a writer that
// died mid-write leaves a partial one).
uint64_t ConsistentSize(uint64_t bytes);

// The names in tree/logs; a last line without its newline (a torn write)
// is left out.
absl::StatusOr<std::vector<std::string>> ReadLogNames(int fd,
                                                      const std::string& path,
                                                      uint64_t* complete_bytes);

// Calls `visit` with each entry of leaves [from, to) of tree/entries, read
// whole, about 1 MiB at a time, until it returns false; `*stopped` is the
// leaf it returned false for, or `to`. `bytes_read` (when given) counts the
// bytes read.
absl::Status VisitEntries(int fd, const std::string& path, uint64_t from,
                          uint64_t to,
                          const std::function<bool(const char*)>& visit,
                          uint64_t* stopped, uint64_t* bytes_read = nullptr);

std::string FolderPath(const std::string& folder, absl::string_view name);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_TREE_FILES_H_
