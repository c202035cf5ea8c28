#include "lib/audit/tree_store.h"

#include <dirent.h>
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
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace {

constexpr absl::string_view kLockFile = "lock";
constexpr absl::string_view kLogsFile = "logs";
constexpr absl::string_view kEntriesFile = "entries";
constexpr absl::string_view kCheckpointFile = "checkpoint";
constexpr absl::string_view kDurableFile = "durable";
// "<20 digits> <44 base64 characters>\n"
constexpr size_t kDurableMarkBytes = 20 + 1 + 44 + 1;
// tree/logs holds one short name per session; far below this.
constexpr size_t kMaxLogsFileBytes = 64 << 20;
// A line the auditor wrote is at most kMaxAuditLineBytes; a window of twice
// that always holds a whole line and a read.
constexpr size_t kLineWindowBytes = 2 * kMaxAuditLineBytes + 2;

void PutBigEndian(uint64_t value, int bytes, std::string* out) {
  for (int i = bytes - 1; i >= 0; --i) {
    out->push_back(static_cast<char>(value >> (8 * i)));
  }
}

uint64_t GetBigEndian(const char* data, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i)
    value = value << 8 | static_cast<uint8_t>(data[i]);
  return value;
}

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

StoredHashReader HashReaderOf(int fd, std::string path, uint64_t size) {
  return [fd, path, size](int level, uint64_t n) -> absl::StatusOr<MerkleHash> {
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
    return hash;
  };
}

// The number of whole entries in `bytes` of tree/entries (a writer that
// died mid-write leaves a partial one).
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

// The names in tree/logs; a last line without its newline (a torn write)
// is left out.
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

// Calls `visit` with each entry of leaves [from, to) of tree/entries, read
// whole, about 1 MiB at a time, until it returns false; `*stopped` is the
// leaf it returned false for, or `to`.
absl::Status VisitEntries(int fd, const std::string& path, uint64_t from,
                          uint64_t to,
                          const std::function<bool(const char*)>& visit,
                          uint64_t* stopped) {
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

}  // namespace

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
        edge_,
        MerkleEdge::Load(size, HashReaderOf(entries_.get(), entries, size)));
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

absl::Status TreeAppender::RecoverLocked(
    const std::string& project_audit_folder) {
  RETURN_IF_ERROR(CatchUpLogsLocked());
  // How far each log is in the tree already.
  std::vector<uint64_t> covered(log_numbers_.size(), 0);
  {
    uint64_t end_leaf = 0;
    RETURN_IF_ERROR(VisitEntries(
        entries_.get(), FolderPath(folder_, kEntriesFile), 0, edge_.size(),
        [&](const char* record) {
          uint64_t log = GetBigEndian(record, 4);
          uint64_t end =
              GetBigEndian(record + 8, 8) + GetBigEndian(record + 4, 4) + 1;
          if (log < covered.size()) covered[log] = std::max(covered[log], end);
          return true;
        },
        &end_leaf));
  }
  std::vector<std::string> names;
  {
    DIR* dir = ::opendir(project_audit_folder.c_str());
    if (dir == nullptr) {
      return LastErrnoStatus(
          absl::StrCat("opendir(", project_audit_folder, ")"));
    }
    while (struct dirent* entry = ::readdir(dir)) {
      absl::string_view name = entry->d_name;
      if (name[0] != '.' && name.size() > kLogSuffix.size() &&
          absl::EndsWith(name, kLogSuffix)) {
        names.emplace_back(name.substr(0, name.size() - kLogSuffix.size()));
      }
    }
    ::closedir(dir);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (!CheckLogName(name).ok()) continue;
    auto found = log_numbers_.find(name);
    uint64_t from =
        found == log_numbers_.end() || found->second >= covered.size()
            ? 0
            : covered[found->second];
    const std::string path =
        JoinPath(project_audit_folder, absl::StrCat(name, kLogSuffix));
    absl::StatusOr<UniqueFd> fd = OpenRegularFile(path, {});
    // A FIFO or a link among the logs is verify's to report, not a reason
    // for the auditor to stop.
    if (!fd.ok()) continue;
    // A log whose auditor is alive holds its lock, and that auditor adds
    // its own lines with its next group: only logs nobody writes any more
    // (their auditor died, or wrote before the tree) are taken up here.
    if (::flock(fd->get(), LOCK_EX | LOCK_NB) != 0) continue;
    ASSIGN_OR_RETURN(uint64_t file_size, FileSize(fd->get(), path));
    if (file_size <= from) continue;
    std::string window;
    uint64_t at = from;
    const uint64_t tree_size_before = edge_.size();
    std::optional<uint32_t> number;
    if (found != log_numbers_.end()) number = found->second;
    while (at < file_size) {
      size_t want = static_cast<size_t>(
          std::min<uint64_t>(file_size - at, kLineWindowBytes));
      window.resize(want);
      RETURN_IF_ERROR(PreadExact(fd->get(), window.data(), want, at, path));
      size_t pos = 0;
      while (pos < want) {
        const void* newline =
            std::memchr(window.data() + pos, '\n', want - pos);
        if (newline == nullptr) break;
        size_t end = static_cast<const char*>(newline) - window.data();
        if (!number) {
          ASSIGN_OR_RETURN(uint32_t registered, RegisterLogLocked(name));
          number = registered;
        }
        absl::string_view line =
            absl::string_view(window).substr(pos, end - pos);
        AppendLeafLocked(*number, static_cast<uint32_t>(line.size()), at + pos,
                         MerkleLeafHash(line));
        pos = end + 1;
      }
      if (pos == 0) {
        if (want == kLineWindowBytes) {
          return absl::DataLossError(absl::StrCat(
              path, ": a line at byte ", at, " is longer than ",
              kLineWindowBytes,
              " bytes, which the auditor never writes; "
              "move the log away and run garuda-audit verify on it"));
        }
        break;  // a torn last line: not a line yet
      }
      at += pos;
      RETURN_IF_ERROR(FlushLocked());
    }
    // Its auditor may have died before its fsync: the lines taken up are
    // made durable before any checkpoint signs them.
    if (edge_.size() != tree_size_before && ::fdatasync(fd->get()) != 0) {
      return LastErrnoStatus(absl::StrCat("fdatasync(", path, ")"));
    }
  }
  return FlushLocked();
}

uint64_t TreeAppender::DurableSizeLocked() {
  char mark[kDurableMarkBytes + 1];
  ssize_t got = ::pread(durable_.get(), mark, sizeof(mark), 0);
  std::optional<TreeDurableMark> parsed =
      got < 0 ? std::nullopt
              : ParseTreeDurableMark(
                    absl::string_view(mark, static_cast<size_t>(got)));
  if (!parsed || parsed->size > edge_.size()) return 0;
  absl::StatusOr<MerkleHash> tree_root =
      TreeRoot(parsed->size,
               HashReaderOf(entries_.get(), FolderPath(folder_, kEntriesFile),
                            edge_.size()));
  if (!tree_root.ok() || *tree_root != parsed->root) return 0;
  return parsed->size;
}

absl::Status TreeAppender::RepairTailLocked(
    const std::string& project_audit_folder) {
  const std::string entries = FolderPath(folder_, kEntriesFile);
  const uint64_t size = edge_.size();
  const uint64_t from = DurableSizeLocked();
  durable_size_ = from;
  if (from == size) return absl::OkStatus();
  ASSIGN_OR_RETURN(
      MerkleEdge edge,
      MerkleEdge::Load(from, HashReaderOf(entries_.get(), entries, size)));
  // The logs the tail names, opened as they come (a power failure leaves a
  // tail of one group per session at most, so few).
  std::map<uint32_t, std::optional<LogLineReader>> readers;
  std::vector<std::string> names(log_numbers_.size());
  for (const auto& [name, number] : log_numbers_) names[number] = name;
  // The entry holds the leaf hash of the line it names, and the hashes the
  // edge gains with it.
  auto entry_matches_line = [&](const char* entry) {
    const uint64_t log = GetBigEndian(entry, 4);
    const uint32_t length = static_cast<uint32_t>(GetBigEndian(entry + 4, 4));
    const uint64_t offset = GetBigEndian(entry + 8, 8);
    if (log >= names.size()) return false;
    auto reader = readers.find(static_cast<uint32_t>(log));
    if (reader == readers.end()) {
      absl::StatusOr<LogLineReader> opened = LogLineReader::Open(
          JoinPath(project_audit_folder, absl::StrCat(names[log], kLogSuffix)));
      std::optional<LogLineReader> kept;
      if (opened.ok()) kept = std::move(opened).value();
      reader =
          readers.emplace(static_cast<uint32_t>(log), std::move(kept)).first;
    }
    if (!reader->second) return false;
    absl::StatusOr<absl::string_view> line =
        reader->second->LineAt(offset, length);
    if (!line.ok()) return false;
    stored_.clear();
    edge.Append(MerkleLeafHash(*line), &stored_);
    const char* hashes = entry + kTreeLeafRecordBytes;
    for (size_t i = 0; i < stored_.size(); ++i) {
      if (std::memcmp(hashes + 32 * i, stored_[i].data(), 32) != 0) {
        return false;
      }
    }
    return true;
  };
  uint64_t good = from;
  RETURN_IF_ERROR(VisitEntries(entries_.get(), entries, from, size,
                               entry_matches_line, &good));
  if (good == size) return absl::OkStatus();
  // Not the lines of the logs from here on: what a power failure left of
  // entries written after the last sync (or a tree ahead of a log that lost
  // its tail). The lines that are in the logs are added again by
  // RecoverLocked.
  if (::ftruncate(entries_.get(), TreeEntryOffset(good)) != 0) {
    return LastErrnoStatus(absl::StrCat("ftruncate(", entries, ")"));
  }
  ASSIGN_OR_RETURN(edge_, MerkleEdge::Load(good, HashReaderOf(entries_.get(),
                                                              entries, good)));
  return absl::OkStatus();
}

void TreeAppender::AppendLeafLocked(uint32_t log, uint32_t length,
                                    uint64_t offset, const MerkleHash& hash) {
  PutBigEndian(log, 4, &entry_buffer_);
  PutBigEndian(length, 4, &entry_buffer_);
  PutBigEndian(offset, 8, &entry_buffer_);
  stored_.clear();
  edge_.Append(hash, &stored_);
  for (const MerkleHash& stored : stored_) {
    entry_buffer_.append(reinterpret_cast<const char*>(stored.data()),
                         stored.size());
  }
}

absl::Status TreeAppender::FlushLocked() {
  if (entry_buffer_.empty()) return absl::OkStatus();
  // One write: a crash inside it leaves a partial entry, which the next
  // writer cuts back.
  absl::Status written = WriteAll(entries_.get(), entry_buffer_);
  entry_buffer_.clear();
  return written;
}

void TreeAppender::LeavesOf(absl::string_view lines, uint64_t offset,
                            std::vector<PendingLeaf>* pending) {
  size_t pos = 0;
  while (pos < lines.size()) {
    size_t end = lines.find('\n', pos);
    if (end == absl::string_view::npos) end = lines.size();
    absl::string_view line = lines.substr(pos, end - pos);
    pending->push_back({offset + pos, static_cast<uint32_t>(line.size()),
                        MerkleLeafHash(line)});
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
  return absl::OkStatus();
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
