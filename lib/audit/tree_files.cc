#include "lib/audit/tree_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/audit/paths.h"
#include "lib/audit/tree_store.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"

namespace garuda {

absl::StatusOr<uint64_t> FileSize(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return LastErrnoStatus(absl::StrCat("fstat(", path, ")"));
  }
  return static_cast<uint64_t>(st.st_size);
}

absl::Status PreadExact(int fd, void* buffer, size_t size, uint64_t offset,
                        const std::string& path) {
  char* out = static_cast<char*>(buffer);
  while (size > 0) {
    ssize_t got = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return LastErrnoStatus(absl::StrCat("pread(", path, ")"));
    if (got == 0) {
      return absl::DataLossError(
          absl::StrCat(path, " ends before offset ", offset + size));
    }
    out += got;
    size -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return absl::OkStatus();
}

StoredHashReader HashReaderOf(int fd, std::string path, uint64_t size,
                              uint64_t* bytes_read) {
  return [fd, path, size, bytes_read](
             int level, uint64_t n) -> absl::StatusOr<MerkleHash> {
    // The subtree's hash is stored in the entry of its last leaf.
    const uint64_t last = ((n + 1) << level) - 1;
    if (last >= size) {
      return absl::DataLossError(
          absl::StrCat(path, " holds ", size, " leaves; the hash of level ",
                       level, " index ", n, " is not among them"));
    }
    MerkleHash hash;
    RETURN_IF_ERROR(PreadExact(
        fd, hash.data(), hash.size(),
        TreeEntryOffset(last) + kTreeLeafRecordBytes + 32 * level, path));
    if (bytes_read != nullptr) *bytes_read += hash.size();
    return hash;
  };
}

uint64_t ConsistentSize(uint64_t bytes) {
  uint64_t low = 0, high = bytes / (kTreeLeafRecordBytes + 32) + 1;
  while (low + 1 < high) {
    uint64_t middle = low + (high - low) / 2;
    if (TreeEntryOffset(middle) <= bytes) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return low;
}

absl::StatusOr<std::vector<std::string>> ReadLogNames(
    int fd, const std::string& path, uint64_t* complete_bytes) {
  ASSIGN_OR_RETURN(uint64_t size, FileSize(fd, path));
  if (size > kMaxLogsFileBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat(path, " is larger than ", kMaxLogsFileBytes, " bytes"));
  }
  std::string content(size, '\0');
  RETURN_IF_ERROR(PreadExact(fd, content.data(), size, 0, path));
  size_t end = content.rfind('\n');
  end = end == std::string::npos ? 0 : end + 1;
  if (complete_bytes != nullptr) *complete_bytes = end;
  std::vector<std::string> names;
  if (end == 0) return names;
  for (absl::string_view name :
       absl::StrSplit(absl::string_view(content).substr(0, end - 1), '\n')) {
    names.emplace_back(name);
  }
  return names;
}

absl::Status VisitEntries(int fd, const std::string& path, uint64_t from,
                          uint64_t to,
                          const std::function<bool(const char*)>& visit,
                          uint64_t* stopped, uint64_t* bytes_read) {
  std::string chunk;
  uint64_t leaf = from;
  while (leaf < to) {
    uint64_t last = leaf + 1;
    while (last < to &&
           TreeEntryOffset(last + 1) - TreeEntryOffset(leaf) < (1 << 20)) {
      ++last;
    }
    const uint64_t start = TreeEntryOffset(leaf);
    chunk.resize(static_cast<size_t>(TreeEntryOffset(last) - start));
    RETURN_IF_ERROR(PreadExact(fd, chunk.data(), chunk.size(), start, path));
    if (bytes_read != nullptr) *bytes_read += chunk.size();
    for (; leaf < last; ++leaf) {
      if (!visit(chunk.data() + (TreeEntryOffset(leaf) - start))) {
        *stopped = leaf;
        return absl::OkStatus();
      }
    }
  }
  *stopped = to;
  return absl::OkStatus();
}

std::string FolderPath(const std::string& folder, absl::string_view name) {
  return JoinPath(folder, name);
}

}  // namespace garuda
