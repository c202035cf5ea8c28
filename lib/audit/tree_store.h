// The project's Merkle tree on disk (docs/audit.md, "The tree"): one RFC 6962
// tree over every line of every log of a project, in the order the auditors
// appended them. Beside the logs:
//
//   tree/lock        flock(2) held while a line goes into a log and the tree
//   tree/logs        the names of the logs, one per line; a leaf names its
//                    log by the number of that line (0-based)
//   tree/leaves      16 bytes per leaf: the log's number and the line's
//                    length (u32 each), its offset in the log (u64), all
//                    big-endian
//   tree/hashes      the stored hashes, 32 bytes each, in the layout of
//                    lib/crypto/merkle.h (so any proof is O(log n) reads)
//   tree/checkpoint  the latest signed checkpoint (a C2SP signed note)
//   tree/key         the verifier key of the signing key (what the auditor
//                    signs with; a reader may trust another copy more)
//   tree/witness/    per witness URL, the latest checkpoint it cosigned,
//                    with its cosignatures
//
// A leaf is SHA-256(0x00 || the line as written, without its newline).
#ifndef GARUDA_LIB_AUDIT_TREE_STORE_H_
#define GARUDA_LIB_AUDIT_TREE_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/unique_fd.h"
#include "lib/crypto/merkle.h"
#include "lib/crypto/note.h"

namespace garuda {

inline constexpr absl::string_view kTreeFolder = "tree";
inline constexpr size_t kTreeLeafRecordBytes = 16;

struct TreeLeaf {
  uint32_t log = 0;  // the number of its log in tree/logs
  uint32_t length = 0;
  uint64_t offset = 0;
};

// "<project folder>/tree".
std::string TreeFolderOf(const std::string& project_audit_folder);
// "<tree>/witness/<first 16 hex digits of SHA-256 of the URL>".
std::string WitnessCheckpointPath(const std::string& tree_folder,
                                  absl::string_view url);

// The read side (garuda-audit): a snapshot of the sizes at the open.
class TreeReader {
 public:
  // NOT_FOUND when the project has no tree.
  static absl::StatusOr<TreeReader> Open(const std::string& tree_folder);

  uint64_t size() const { return size_; }
  const std::string& folder() const { return folder_; }
  const std::vector<std::string>& logs() const { return logs_; }
  absl::StatusOr<TreeLeaf> Leaf(uint64_t index) const;
  StoredHashReader Hashes() const;
  // The leaves file's descriptor, for a sequential reader.
  int leaves_fd() const { return leaves_.get(); }
  int hashes_fd() const { return hashes_.get(); }

 private:
  std::string folder_;
  UniqueFd leaves_, hashes_;
  uint64_t size_ = 0;
  std::vector<std::string> logs_;
};

// Reads lines of one log at known offsets, sequentially, in bounded memory.
class LogLineReader {
 public:
  static absl::StatusOr<LogLineReader> Open(const std::string& path);
  // The `length` bytes at `offset`, which must be followed by a newline.
  absl::StatusOr<absl::string_view> LineAt(uint64_t offset, uint32_t length);
  uint64_t file_size() const { return file_size_; }

 private:
  std::string path_;
  UniqueFd fd_;
  uint64_t file_size_ = 0;
  std::string buffer_;
  uint64_t buffer_offset_ = 0;
};

// The write side: one per auditor process, for its own log.
class TreeAppender {
 public:
  // Creates tree/ (0700) and its files (0600) when missing, and under the
  // lock brings the tree up to the logs: complete lines of any log that the
  // tree does not hold yet (an auditor that died between its log and the
  // tree, logs written before the tree was turned on) are added, in the
  // order of the logs' names. Then registers `log_name`.
  static absl::StatusOr<std::unique_ptr<TreeAppender>> Open(
      const std::string& project_audit_folder, const std::string& log_name);

  // Holds the project's tree lock while alive.
  class Lock {
   public:
    explicit Lock(int fd) : fd_(fd) {}
    Lock(Lock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
    Lock(const Lock&) = delete;
    ~Lock();

   private:
    int fd_;
  };
  // Takes the lock and catches up with leaves other auditors appended.
  absl::StatusOr<Lock> LockAndCatchUp();

  // Appends the lines in `lines` (each ending in "\n", as written to the
  // log at `offset`) as leaves of this appender's log. Under the lock.
  absl::Status AppendLines(absl::string_view lines, uint64_t offset);
  // fdatasync of the leaves and hashes.
  absl::Status Sync();
  // Under the lock: signs a checkpoint of the tree at its current size and
  // writes tree/checkpoint atomically, unless one at that size or larger
  // is there already.
  absl::Status WriteSignedCheckpoint(const NoteSigner& signer,
                                     const std::string& origin);

  uint64_t size() const { return edge_.size(); }
  MerkleHash root() const { return edge_.Root(); }
  const std::string& folder() const { return folder_; }

 private:
  TreeAppender() = default;
  absl::Status AppendLeafLocked(uint32_t log, absl::string_view line,
                                uint64_t offset);
  absl::Status FlushLocked();
  absl::StatusOr<uint32_t> RegisterLogLocked(const std::string& name);
  absl::Status RecoverLocked(const std::string& project_audit_folder);

  std::string folder_;
  UniqueFd lock_, logs_fd_, leaves_, hashes_;
  std::map<std::string, uint32_t> log_numbers_;
  uint32_t own_log_ = 0;
  MerkleEdge edge_;
  std::string leaf_buffer_, hash_buffer_;
  std::vector<MerkleHash> stored_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_TREE_STORE_H_
