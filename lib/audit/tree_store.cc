#include "lib/audit/tree_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "lib/audit/line_format.h"
#include "lib/audit/paths.h"
#include "lib/audit/tree_files.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"

namespace garuda {

std::optional<TreeDurableMark> ParseTreeDurableMark(absl::string_view text) {
  if (text.size() != kDurableMarkBytes || text[20] != ' ' ||
      text.back() != '\n') {
    return std::nullopt;
  }
  TreeDurableMark mark;
  absl::StatusOr<std::string> root = Base64Decode(text.substr(21, 44));
  if (!absl::SimpleAtoi(text.substr(0, 20), &mark.size) || !root.ok()) {
    return std::nullopt;
  }
  absl::StatusOr<MerkleHash> hash = HashFromBytes(*root);
  if (!hash.ok()) return std::nullopt;
  mark.root = *hash;
  return mark;
}

std::string TreeFolderOf(const std::string& project_audit_folder) {
  return JoinPath(project_audit_folder, kTreeFolder);
}

std::string WitnessCheckpointPath(const std::string& tree_folder,
                                  absl::string_view url) {
  return JoinPath(JoinPath(tree_folder, "witness"),
                  Sha256Hex(url).substr(0, 16));
}

absl::StatusOr<TreeReader> TreeReader::Open(const std::string& tree_folder) {
  TreeReader reader;
  reader.folder_ = tree_folder;
  const std::string entries = FolderPath(tree_folder, kEntriesFile);
  const std::string logs = FolderPath(tree_folder, kLogsFile);
  absl::StatusOr<UniqueFd> entries_fd = OpenRegularFile(entries, {});
  if (absl::IsNotFound(entries_fd.status())) {
    return absl::NotFoundError(absl::StrCat(tree_folder, " has no tree"));
  }
  RETURN_IF_ERROR(entries_fd.status());
  reader.entries_ = std::move(entries_fd).value();
  ASSIGN_OR_RETURN(UniqueFd logs_fd, OpenRegularFile(logs, {}));
  ASSIGN_OR_RETURN(reader.logs_, ReadLogNames(logs_fd.get(), logs, nullptr));
  ASSIGN_OR_RETURN(uint64_t bytes, FileSize(reader.entries_.get(), entries));
  reader.size_ = ConsistentSize(bytes);
  return reader;
}

absl::StatusOr<TreeLeaf> TreeReader::Leaf(uint64_t index) const {
  if (index >= size_) {
    return absl::OutOfRangeError(
        absl::StrCat("leaf ", index, " is not in a tree of ", size_));
  }
  char record[kTreeLeafRecordBytes];
  RETURN_IF_ERROR(PreadExact(entries_.get(), record, sizeof(record),
                             TreeEntryOffset(index),
                             FolderPath(folder_, kEntriesFile)));
  TreeLeaf leaf;
  leaf.log = static_cast<uint32_t>(GetBigEndian(record, 4));
  leaf.length = static_cast<uint32_t>(GetBigEndian(record + 4, 4));
  leaf.offset = GetBigEndian(record + 8, 8);
  if (leaf.log >= logs_.size()) {
    return absl::DataLossError(
        absl::StrCat("leaf ", index, " names log number ", leaf.log, ", which ",
                     FolderPath(folder_, kLogsFile), " does not list"));
  }
  return leaf;
}

StoredHashReader TreeReader::Hashes() const {
  return HashReaderOf(entries_.get(), FolderPath(folder_, kEntriesFile), size_);
}

absl::StatusOr<LogLineReader> LogLineReader::Open(const std::string& path) {
  LogLineReader reader;
  reader.path_ = path;
  ASSIGN_OR_RETURN(reader.fd_, OpenRegularFile(path, {}));
  ASSIGN_OR_RETURN(reader.file_size_, FileSize(reader.fd_.get(), path));
  return reader;
}

absl::StatusOr<absl::string_view> LogLineReader::LineAt(uint64_t offset,
                                                        uint32_t length) {
  const uint64_t end = offset + length + 1;  // the newline included
  if (end > file_size_) {
    return absl::DataLossError(absl::StrCat(
        path_, " ends at byte ", file_size_, ", before the line at ", offset,
        " (", length, " bytes) that the tree holds"));
  }
  if (offset < buffer_offset_ || end > buffer_offset_ + buffer_.size()) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(
        std::max<uint64_t>(kLineWindowBytes, length + 1), file_size_ - offset));
    buffer_.resize(want);
    RETURN_IF_ERROR(PreadExact(fd_.get(), buffer_.data(), want, offset, path_));
    buffer_offset_ = offset;
  }
  absl::string_view line(buffer_.data() + (offset - buffer_offset_),
                         length + 1);
  if (line.back() != '\n' ||
      line.substr(0, length).find('\n') != absl::string_view::npos) {
    return absl::DataLossError(absl::StrCat(path_, ": the bytes at ", offset,
                                            " are not one line of ", length,
                                            " bytes, as the tree says"));
  }
  line.remove_suffix(1);
  return line;
}

TreeAppender::Lock::~Lock() {
  if (fd_ >= 0) ::flock(fd_, LOCK_UN);
}

absl::StatusOr<std::unique_ptr<TreeAppender>> TreeAppender::Open(
    const std::string& project_audit_folder, const std::string& log_name) {
  std::unique_ptr<TreeAppender> tree(new TreeAppender());
  tree->folder_ = TreeFolderOf(project_audit_folder);
  RETURN_IF_ERROR(MakePrivateFolder(tree->folder_));
  const int flags = O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC;
  ASSIGN_OR_RETURN(tree->lock_,
                   OpenFile(FolderPath(tree->folder_, kLockFile), flags, 0600));
  ASSIGN_OR_RETURN(
      tree->logs_fd_,
      OpenFile(FolderPath(tree->folder_, kLogsFile), flags | O_APPEND, 0600));
  ASSIGN_OR_RETURN(tree->entries_,
                   OpenFile(FolderPath(tree->folder_, kEntriesFile),
                            flags | O_APPEND, 0600));
  ASSIGN_OR_RETURN(
      tree->durable_,
      OpenFile(FolderPath(tree->folder_, kDurableFile), flags, 0600));
  ASSIGN_OR_RETURN(
      tree->covered_fd_,
      OpenFile(FolderPath(tree->folder_, kCoveredFile), flags, 0600));
  ASSIGN_OR_RETURN(Lock lock, tree->LockAndCatchUp());
  RETURN_IF_ERROR(tree->CatchUpLogsLocked());
  RETURN_IF_ERROR(tree->RepairTailLocked(project_audit_folder));
  RETURN_IF_ERROR(tree->RecoverLocked(project_audit_folder));
  ASSIGN_OR_RETURN(tree->own_log_, tree->RegisterLogLocked(log_name));
  RETURN_IF_ERROR(tree->Sync());
  return tree;
}

absl::StatusOr<TreeAppender::Lock> TreeAppender::LockAndCatchUp() {
  const std::string lock_path = FolderPath(folder_, kLockFile);
  while (::flock(lock_.get(), LOCK_EX) != 0) {
    if (errno != EINTR) {
      return LastErrnoStatus(absl::StrCat("flock(", lock_path, ")"));
    }
  }
  Lock lock(lock_.get());
  const std::string entries = FolderPath(folder_, kEntriesFile);
  ASSIGN_OR_RETURN(uint64_t bytes, FileSize(entries_.get(), entries));
  if (bytes != TreeEntryOffset(edge_.size())) {
    const uint64_t size = ConsistentSize(bytes);
    if (bytes != TreeEntryOffset(size)) {
      // A writer died inside its write (we hold the lock, so none is
      // writing now): back to the last whole entry. Its lines are taken up
      // again from its log by the next auditor that opens the tree.
      if (::ftruncate(entries_.get(), TreeEntryOffset(size)) != 0) {
        return LastErrnoStatus(absl::StrCat("ftruncate(", entries, ")"));
      }
    }
    ASSIGN_OR_RETURN(
        edge_, MerkleEdge::Load(size, HashReaderOf(entries_.get(), entries,
                                                   size, &entry_bytes_read_)));
  }
  return lock;
}

absl::Status TreeAppender::CatchUpLogsLocked() {
  const std::string logs = FolderPath(folder_, kLogsFile);
  ASSIGN_OR_RETURN(uint64_t logs_bytes, FileSize(logs_fd_.get(), logs));
  if (logs_bytes != logs_bytes_) {
    uint64_t complete = 0;
    ASSIGN_OR_RETURN(std::vector<std::string> names,
                     ReadLogNames(logs_fd_.get(), logs, &complete));
    if (logs_bytes != complete && ::ftruncate(logs_fd_.get(), complete) != 0) {
      return LastErrnoStatus(absl::StrCat("ftruncate(", logs, ")"));
    }
    logs_bytes_ = complete;
    for (uint32_t i = static_cast<uint32_t>(log_numbers_.size());
         i < names.size(); ++i) {
      log_numbers_.emplace(names[i], i);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<uint32_t> TreeAppender::RegisterLogLocked(
    const std::string& name) {
  RETURN_IF_ERROR(CatchUpLogsLocked());
  auto found = log_numbers_.find(name);
  if (found != log_numbers_.end()) return found->second;
  RETURN_IF_ERROR(CheckLogName(name));
  uint32_t number = static_cast<uint32_t>(log_numbers_.size());
  const std::string line = absl::StrCat(name, "\n");
  RETURN_IF_ERROR(WriteAll(logs_fd_.get(), line));
  logs_bytes_ += line.size();
  logs_dirty_ = true;
  log_numbers_.emplace(name, number);
  return number;
}

void TreeAppender::AppendLeafLocked(uint32_t log, uint32_t length,
                                    uint64_t offset, const MerkleHash& hash) {
  // Written in place: once the buffer has grown to a group's size, a leaf
  // costs no allocation.
  if (covered_leaves_ == edge_.size()) {
    if (log >= covered_.size()) covered_.resize(log + 1, 0);
    covered_[log] = std::max<uint64_t>(covered_[log], offset + length + 1);
    ++covered_leaves_;
  }
  const size_t at = entry_buffer_.size();
  entry_buffer_.resize(at + kTreeLeafRecordBytes +
                       32 * TreeEntryHashes(edge_.size()));
  char* entry = entry_buffer_.data() + at;
  StoreBigEndian(log, 4, entry);
  StoreBigEndian(length, 4, entry + 4);
  StoreBigEndian(offset, 8, entry + 8);
  edge_.AppendInto(hash,
                   reinterpret_cast<uint8_t*>(entry + kTreeLeafRecordBytes));
}

absl::Status TreeAppender::FlushLocked() {
  if (entry_buffer_.empty()) return absl::OkStatus();
  // One write: a crash inside it leaves a partial entry, which the next
  // writer cuts back.
  absl::Status written = WriteAll(entries_.get(), entry_buffer_);
  entry_buffer_.clear();
  return written;
}

void TreeAppender::LeafOfLine(absl::string_view line, uint64_t offset,
                              std::vector<PendingLeaf>* pending) {
  pending->push_back(
      {offset, static_cast<uint32_t>(line.size()), MerkleLeafHash(line)});
}

void TreeAppender::LeavesOf(absl::string_view lines, uint64_t offset,
                            std::vector<PendingLeaf>* pending) {
  size_t pos = 0;
  while (pos < lines.size()) {
    size_t end = lines.find('\n', pos);
    if (end == absl::string_view::npos) end = lines.size();
    LeafOfLine(lines.substr(pos, end - pos), offset + pos, pending);
    pos = end + 1;
  }
}

absl::Status TreeAppender::AppendLeaves(
    const std::vector<PendingLeaf>& pending) {
  for (const PendingLeaf& leaf : pending) {
    AppendLeafLocked(own_log_, leaf.length, leaf.offset, leaf.hash);
  }
  return FlushLocked();
}

absl::Status TreeAppender::AppendLines(absl::string_view lines,
                                       uint64_t offset) {
  std::vector<PendingLeaf> pending;
  LeavesOf(lines, offset, &pending);
  return AppendLeaves(pending);
}

absl::Status TreeAppender::Sync() {
  if (logs_dirty_) {
    if (::fdatasync(logs_fd_.get()) != 0) {
      return LastErrnoStatus(absl::StrCat("fdatasync(", folder_, "/logs)"));
    }
    logs_dirty_ = false;
  }
  if (::fdatasync(entries_.get()) != 0) {
    return LastErrnoStatus(absl::StrCat("fdatasync(", folder_, "/entries)"));
  }
  return WriteDurableMarkLocked();
}

absl::Status TreeAppender::WriteDurableMarkLocked() {
  // Written after the sync it vouches for and without one of its own: lost,
  // it only makes the next open check more of the tail; torn, its root no
  // longer matches and the next open checks the whole tree.
  const std::string mark = absl::StrFormat(
      "%020u %s\n", edge_.size(), Base64Encode(HashBytes(edge_.Root())));
  const std::string path = FolderPath(folder_, kDurableFile);
  if (::pwrite(durable_.get(), mark.data(), mark.size(), 0) !=
          static_cast<ssize_t>(mark.size()) ||
      ::ftruncate(durable_.get(), static_cast<off_t>(mark.size())) != 0) {
    return LastErrnoStatus(absl::StrCat("write(", path, ")"));
  }
  durable_size_ = edge_.size();
  return WriteCoverageLocked();
}

absl::Status TreeAppender::CheckpointCommitted() {
  if (!synced_with_checkpoint_) return absl::OkStatus();
  synced_with_checkpoint_ = false;
  logs_dirty_ = false;
  return WriteDurableMarkLocked();
}

absl::Status TreeAppender::SyncWhenDue() {
  if (edge_.size() - durable_size_ < kTreeSyncLeaves) return absl::OkStatus();
  return Sync();
}

absl::Status TreeAppender::WriteSignedCheckpoint(const NoteSigner& signer,
                                                 const std::string& origin) {
  ASSIGN_OR_RETURN(Lock lock, LockAndCatchUp());
  DurableFiles files;
  RETURN_IF_ERROR(AddSignedCheckpoint(signer, origin, &files));
  RETURN_IF_ERROR(files.Commit());
  return CheckpointCommitted();
}

absl::Status TreeAppender::AddSignedCheckpoint(const NoteSigner& signer,
                                               const std::string& origin,
                                               DurableFiles* files) {
  const std::string path = FolderPath(folder_, kCheckpointFile);
  absl::StatusOr<std::string> existing = ReadRegularFile(path, [] {
    RegularFileOptions options;
    options.max_bytes = kMaxNoteBytes;
    return options;
  }());
  if (existing.ok()) {
    absl::StatusOr<Note> note = ParseNote(*existing);
    absl::StatusOr<Checkpoint> checkpoint =
        note.ok() ? ParseCheckpoint(note->text)
                  : absl::StatusOr<Checkpoint>(note.status());
    if (checkpoint.ok() && checkpoint->origin == origin) {
      if (checkpoint->size >= edge_.size()) return absl::OkStatus();
      // A log never signs a tree that does not extend what it signed
      // before (c2sp.org/tlog-checkpoint): lines rewritten under the tree
      // stop the auditor here instead of being signed over.
      ASSIGN_OR_RETURN(MerkleHash root,
                       TreeRoot(checkpoint->size,
                                HashReaderOf(entries_.get(),
                                             FolderPath(folder_, kEntriesFile),
                                             edge_.size())));
      if (root != checkpoint->root) {
        return absl::DataLossError(absl::StrCat(
            "the tree's first ", checkpoint->size,
            " lines no longer have the root of the checkpoint signed at that "
            "size (",
            path,
            "): the logs were rewritten; nothing more is signed. Run "
            "garuda-audit verify, and keep the logs and the tree as they are "
            "for whoever looks into it"));
      }
    }
  }
  Checkpoint checkpoint;
  checkpoint.origin = origin;
  checkpoint.size = edge_.size();
  checkpoint.root = edge_.Root();
  ASSIGN_OR_RETURN(std::string note,
                   SignNote(FormatCheckpoint(checkpoint), signer));
  // The entries it covers are synced with the checkpoint (one batch, so
  // about one more flush): rebuilt from the logs after a power failure, the
  // lines of parallel sessions could come back in another order than the
  // one signed, and the auditor would then refuse to sign again.
  if (durable_size_ != edge_.size()) {
    if (logs_dirty_)
      files->AddSync(logs_fd_.get(), FolderPath(folder_, kLogsFile));
    files->AddSync(entries_.get(), FolderPath(folder_, kEntriesFile));
    synced_with_checkpoint_ = true;
  }
  return files->Add(path, note, 0600);
}

}  // namespace garuda
