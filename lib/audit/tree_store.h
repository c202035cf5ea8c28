// The project's Merkle tree on disk (docs/audit.md, "The tree"): one RFC 6962
// tree over every line of every log of a project, in the order the auditors
// appended them. Beside the logs:
//
//   tree/lock        flock(2) held while a line goes into a log and the tree
//   tree/logs        the names of the logs, one per line; a leaf names its
//                    log by the number of that line (0-based)
//   tree/entries     per leaf, in order: a 16-byte record (the log's number
//                    and the line's length, u32 each, its offset in the
//                    log, u64, all big-endian), then the hashes the leaf
//                    stores (lib/crypto/merkle.h: its own, then those of
//                    the subtrees it completes, 32 bytes each). Leaf n's
//                    entry starts at TreeEntryOffset(n), and any hash,
//                    hence any proof, is O(log n) reads away
//   tree/durable     "<size, 20 digits> <base64 root>\n": the entries up
//                    to that size were fdatasynced. The entries past it
//                    are written without a sync of their own (the tree is
//                    derived from the logs, which are synced first); the
//                    next auditor that opens the tree checks them against
//                    the logs and cuts the tree back where they disagree
//   tree/covered     a mark like tree/durable's, then per log (in the order
//                    of tree/logs) one line: the byte where the last of its
//                    lines the first <size> leaves hold ends. An open reads
//                    only the entries past it to learn how far each log is
//                    in the tree, instead of the whole tree; missing, torn
//                    or not a prefix of the tree, the whole tree is read
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
#include "lib/audit/durable_files.h"
#include "lib/base/unique_fd.h"
#include "lib/crypto/merkle.h"
#include "lib/crypto/note.h"

namespace garuda {

inline constexpr absl::string_view kTreeFolder = "tree";
inline constexpr size_t kTreeLeafRecordBytes = 16;
// Leaves past tree/durable after which an appender syncs the entries: what
// the next open checks against the logs is bounded by this (about 16 MB of
// lines), and the sync costs one fdatasync per this many leaves.
inline constexpr uint64_t kTreeSyncLeaves = 1 << 16;

// Where leaf n's entry starts in tree/entries: the bytes of n leaves.
inline uint64_t TreeEntryOffset(uint64_t n) {
  return kTreeLeafRecordBytes * n + 32 * StoredHashCount(n);
}
// The hashes leaf n stores: its own and one per trailing one bit of n.
inline int TreeEntryHashes(uint64_t n) {
  int count = 1;
  while (n & 1) {
    ++count;
    n >>= 1;
  }
  return count;
}

struct TreeLeaf {
  uint32_t log = 0;  // the number of its log in tree/logs
  uint32_t length = 0;
  uint64_t offset = 0;
};

// tree/durable: the entries of the first `size` leaves were synced, and
// their root was `root` then.
struct TreeDurableMark {
  uint64_t size = 0;
  MerkleHash root{};
};
// Nothing when `text` is not a whole mark (missing, torn, garbage).
std::optional<TreeDurableMark> ParseTreeDurableMark(absl::string_view text);

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
  // The entries file's descriptor, for a sequential reader.
  int entries_fd() const { return entries_.get(); }

 private:
  std::string folder_;
  UniqueFd entries_;
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
  // lock brings the tree up to the logs. First the entries past
  // tree/durable (what a power failure can have torn, zeroed or lost) are
  // checked against the lines they name, and the tree is cut back before
  // the first that does not match (a torn entry, a line the log no longer
  // holds: a tree ahead of its log). Then complete lines of any log that the
  // tree does not hold yet (an auditor that died between its log and the
  // tree, logs written before the tree was turned on) are added, in the
  // order of the logs' names. A log that an auditor holds an flock(2) on is
  // left to that auditor (its writer keeps one for its life). Then
  // registers `log_name`.
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

  // Lines of this appender's log waiting for the tree: where each is and
  // its leaf hash (computed when the line is written, added a group at a
  // time).
  struct PendingLeaf {
    uint64_t offset = 0;
    uint32_t length = 0;
    MerkleHash hash{};
  };
  // Computes the leaves of `lines` (each ending in "\n", as written to the
  // log at `offset`) into `pending`.
  static void LeavesOf(absl::string_view lines, uint64_t offset,
                       std::vector<PendingLeaf>* pending);
  // The leaf of one line (without its newline) at `offset`: for a writer
  // that knows where its lines end and need not look for them again.
  static void LeafOfLine(absl::string_view line, uint64_t offset,
                         std::vector<PendingLeaf>* pending);
  // Appends `pending` as leaves of this appender's log, in one write.
  // Under the lock.
  absl::Status AppendLeaves(const std::vector<PendingLeaf>& pending);
  // LeavesOf and AppendLeaves at once (tools, benchmarks).
  absl::Status AppendLines(absl::string_view lines, uint64_t offset);
  // Under the lock: fdatasync of the tree's files, then tree/durable.
  absl::Status Sync();
  // Sync when kTreeSyncLeaves leaves were added since the last one.
  absl::Status SyncWhenDue();
  // Under the lock: signs a checkpoint of the tree at its current size into
  // `files`, with the tree's files to sync before it is renamed, unless one
  // at that size or larger is there already. The caller commits `files`
  // and then calls CheckpointCommitted, still under the lock. Call it only
  // when every leaf's line is durable in its log: a signature cannot be
  // taken back.
  absl::Status AddSignedCheckpoint(const NoteSigner& signer,
                                   const std::string& origin,
                                   DurableFiles* files);
  // After the commit of AddSignedCheckpoint's files: the entries it synced
  // are recorded in tree/durable.
  absl::Status CheckpointCommitted();
  // Takes the lock, AddSignedCheckpoint, and commits.
  absl::Status WriteSignedCheckpoint(const NoteSigner& signer,
                                     const std::string& origin);

  uint64_t size() const { return edge_.size(); }
  MerkleHash root() const { return edge_.Root(); }
  // Bytes of tree/entries this appender has read since it was opened (a
  // test's seam: an open reads the tail past tree/covered, not the tree).
  uint64_t entry_bytes_read() const { return entry_bytes_read_; }
  const std::string& folder() const { return folder_; }

 private:
  TreeAppender() = default;
  void AppendLeafLocked(uint32_t log, uint32_t length, uint64_t offset,
                        const MerkleHash& hash);
  absl::Status FlushLocked();
  // Reads the names other auditors added to tree/logs since the last look
  // (appends name only this appender's own log, so they need not look).
  absl::Status CatchUpLogsLocked();
  absl::StatusOr<uint32_t> RegisterLogLocked(const std::string& name);
  absl::Status RecoverLocked(const std::string& project_audit_folder);
  // The size tree/durable vouches for: 0 when it is missing, malformed,
  // larger than the tree, or its root is not the tree's at that size.
  uint64_t DurableSizeLocked();
  absl::Status RepairTailLocked(const std::string& project_audit_folder);
  // tree/durable := the current size and root (the entries are synced),
  // then tree/covered.
  absl::Status WriteDurableMarkLocked();
  // covered_ from tree/covered when it holds a prefix of the tree, else
  // empty.
  absl::Status LoadCoverageLocked();
  // covered_ brought up to the tree's size from the entries past it.
  absl::Status AdvanceCoverageLocked();
  absl::Status WriteCoverageLocked();

  std::string folder_;
  UniqueFd lock_, logs_fd_, entries_, durable_, covered_fd_;
  // Per log number, the end of its last line among the first
  // covered_leaves_ leaves (kept up to date as leaves are appended).
  std::vector<uint64_t> covered_;
  uint64_t covered_leaves_ = 0;
  uint64_t entry_bytes_read_ = 0;
  uint64_t durable_size_ = 0;  // as this appender last wrote tree/durable
  // AddSignedCheckpoint gave the entries to sync to its caller's batch.
  bool synced_with_checkpoint_ = false;
  uint64_t logs_bytes_ = 0;  // of tree/logs, as last read
  bool logs_dirty_ = false;  // written since the last Sync
  std::map<std::string, uint32_t> log_numbers_;
  uint32_t own_log_ = 0;
  MerkleEdge edge_;
  std::string entry_buffer_;
  std::vector<MerkleHash> stored_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_TREE_STORE_H_
