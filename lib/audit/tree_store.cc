#include "lib/audit/tree_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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
constexpr absl::string_view kLeavesFile = "leaves";
constexpr absl::string_view kHashesFile = "hashes";
constexpr absl::string_view kCheckpointFile = "checkpoint";
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

StoredHashReader HashReaderOf(int fd, std::string path, uint64_t count) {
  return [fd, path, count](int level,
                           uint64_t n) -> absl::StatusOr<MerkleHash> {
    uint64_t index = StoredHashIndex(level, n);
    if (index >= count) {
      return absl::DataLossError(absl::StrCat(
          path, " holds ", count, " hashes; hash ", index, " is missing"));
    }
    MerkleHash hash;
    RETURN_IF_ERROR(PreadExact(fd, hash.data(), hash.size(), index * 32, path));
    return hash;
  };
}

// The largest tree size both files hold completely (a writer that died
// between its two writes leaves one of them longer).
uint64_t ConsistentSize(uint64_t leaves_bytes, uint64_t hashes_bytes) {
  uint64_t size = leaves_bytes / kTreeLeafRecordBytes;
  const uint64_t hashes = hashes_bytes / 32;
  while (size > 0 && StoredHashCount(size) > hashes) --size;
  return size;
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

std::string FolderPath(const std::string& folder, absl::string_view name) {
  return JoinPath(folder, name);
}

}  // namespace

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
  const std::string leaves = FolderPath(tree_folder, kLeavesFile);
  const std::string hashes = FolderPath(tree_folder, kHashesFile);
  const std::string logs = FolderPath(tree_folder, kLogsFile);
  absl::StatusOr<UniqueFd> leaves_fd = OpenRegularFile(leaves, {});
  if (absl::IsNotFound(leaves_fd.status())) {
    return absl::NotFoundError(absl::StrCat(tree_folder, " has no tree"));
  }
  RETURN_IF_ERROR(leaves_fd.status());
  reader.leaves_ = std::move(leaves_fd).value();
  ASSIGN_OR_RETURN(reader.hashes_, OpenRegularFile(hashes, {}));
  ASSIGN_OR_RETURN(UniqueFd logs_fd, OpenRegularFile(logs, {}));
  ASSIGN_OR_RETURN(reader.logs_, ReadLogNames(logs_fd.get(), logs, nullptr));
  ASSIGN_OR_RETURN(uint64_t leaves_bytes,
                   FileSize(reader.leaves_.get(), leaves));
  ASSIGN_OR_RETURN(uint64_t hashes_bytes,
                   FileSize(reader.hashes_.get(), hashes));
  reader.size_ = ConsistentSize(leaves_bytes, hashes_bytes);
  return reader;
}

absl::StatusOr<TreeLeaf> TreeReader::Leaf(uint64_t index) const {
  if (index >= size_) {
    return absl::OutOfRangeError(
        absl::StrCat("leaf ", index, " is not in a tree of ", size_));
  }
  char record[kTreeLeafRecordBytes];
  RETURN_IF_ERROR(PreadExact(leaves_.get(), record, sizeof(record),
                             index * kTreeLeafRecordBytes,
                             FolderPath(folder_, kLeavesFile)));
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
  return HashReaderOf(hashes_.get(), FolderPath(folder_, kHashesFile),
                      StoredHashCount(size_));
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
  ASSIGN_OR_RETURN(
      tree->leaves_,
      OpenFile(FolderPath(tree->folder_, kLeavesFile), flags | O_APPEND, 0600));
  ASSIGN_OR_RETURN(
      tree->hashes_,
      OpenFile(FolderPath(tree->folder_, kHashesFile), flags | O_APPEND, 0600));
  ASSIGN_OR_RETURN(Lock lock, tree->LockAndCatchUp());
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
  const std::string leaves = FolderPath(folder_, kLeavesFile);
  const std::string hashes = FolderPath(folder_, kHashesFile);
  ASSIGN_OR_RETURN(uint64_t leaves_bytes, FileSize(leaves_.get(), leaves));
  ASSIGN_OR_RETURN(uint64_t hashes_bytes, FileSize(hashes_.get(), hashes));
  const uint64_t size = ConsistentSize(leaves_bytes, hashes_bytes);
  if (leaves_bytes != size * kTreeLeafRecordBytes ||
      hashes_bytes != StoredHashCount(size) * 32) {
    // A writer died between or inside its writes (we hold the lock, so none
    // is writing now): back to the last whole tree. Its lines are taken up
    // again from its log by the next auditor that opens the tree.
    if (::ftruncate(leaves_.get(), size * kTreeLeafRecordBytes) != 0) {
      return LastErrnoStatus(absl::StrCat("ftruncate(", leaves, ")"));
    }
    if (::ftruncate(hashes_.get(), StoredHashCount(size) * 32) != 0) {
      return LastErrnoStatus(absl::StrCat("ftruncate(", hashes, ")"));
    }
  }
  if (size != edge_.size()) {
    ASSIGN_OR_RETURN(
        edge_, MerkleEdge::Load(size, HashReaderOf(hashes_.get(), hashes,
                                                   StoredHashCount(size))));
  }
  // Logs other auditors registered since.
  const std::string logs = FolderPath(folder_, kLogsFile);
  uint64_t complete = 0;
  ASSIGN_OR_RETURN(std::vector<std::string> names,
                   ReadLogNames(logs_fd_.get(), logs, &complete));
  ASSIGN_OR_RETURN(uint64_t logs_bytes, FileSize(logs_fd_.get(), logs));
  if (logs_bytes != complete && ::ftruncate(logs_fd_.get(), complete) != 0) {
    return LastErrnoStatus(absl::StrCat("ftruncate(", logs, ")"));
  }
  for (uint32_t i = static_cast<uint32_t>(log_numbers_.size());
       i < names.size(); ++i) {
    log_numbers_.emplace(names[i], i);
  }
  return lock;
}

absl::StatusOr<uint32_t> TreeAppender::RegisterLogLocked(
    const std::string& name) {
  auto found = log_numbers_.find(name);
  if (found != log_numbers_.end()) return found->second;
  RETURN_IF_ERROR(CheckLogName(name));
  uint32_t number = static_cast<uint32_t>(log_numbers_.size());
  RETURN_IF_ERROR(WriteAll(logs_fd_.get(), absl::StrCat(name, "\n")));
  log_numbers_.emplace(name, number);
  return number;
}

absl::Status TreeAppender::RecoverLocked(
    const std::string& project_audit_folder) {
  // How far each log is in the tree already.
  std::vector<uint64_t> covered(log_numbers_.size(), 0);
  {
    const std::string leaves = FolderPath(folder_, kLeavesFile);
    std::string chunk;
    const uint64_t total = edge_.size() * kTreeLeafRecordBytes;
    for (uint64_t at = 0; at < total;) {
      size_t want =
          static_cast<size_t>(std::min<uint64_t>(total - at, 1 << 20));
      chunk.resize(want);
      RETURN_IF_ERROR(
          PreadExact(leaves_.get(), chunk.data(), want, at, leaves));
      for (size_t i = 0; i + kTreeLeafRecordBytes <= want;
           i += kTreeLeafRecordBytes) {
        uint64_t log = GetBigEndian(chunk.data() + i, 4);
        uint64_t end = GetBigEndian(chunk.data() + i + 8, 8) +
                       GetBigEndian(chunk.data() + i + 4, 4) + 1;
        if (log < covered.size()) covered[log] = std::max(covered[log], end);
      }
      at += want;
    }
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
    ASSIGN_OR_RETURN(uint64_t file_size, FileSize(fd->get(), path));
    if (file_size <= from) continue;
    std::string window;
    uint64_t at = from;
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
        RETURN_IF_ERROR(AppendLeafLocked(
            *number, absl::string_view(window).substr(pos, end - pos),
            at + pos));
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
  }
  return FlushLocked();
}

absl::Status TreeAppender::AppendLeafLocked(uint32_t log,
                                            absl::string_view line,
                                            uint64_t offset) {
  PutBigEndian(log, 4, &leaf_buffer_);
  PutBigEndian(line.size(), 4, &leaf_buffer_);
  PutBigEndian(offset, 8, &leaf_buffer_);
  stored_.clear();
  edge_.Append(MerkleLeafHash(line), &stored_);
  for (const MerkleHash& hash : stored_) {
    hash_buffer_.append(reinterpret_cast<const char*>(hash.data()),
                        hash.size());
  }
  return absl::OkStatus();
}

absl::Status TreeAppender::FlushLocked() {
  // The leaves first: a reader takes the size both files hold, and a crash
  // between the writes leaves a longer leaves file, which is cut back.
  if (!leaf_buffer_.empty()) {
    absl::Status written = WriteAll(leaves_.get(), leaf_buffer_);
    leaf_buffer_.clear();
    RETURN_IF_ERROR(written);
  }
  if (!hash_buffer_.empty()) {
    absl::Status written = WriteAll(hashes_.get(), hash_buffer_);
    hash_buffer_.clear();
    RETURN_IF_ERROR(written);
  }
  return absl::OkStatus();
}

absl::Status TreeAppender::AppendLines(absl::string_view lines,
                                       uint64_t offset) {
  size_t pos = 0;
  while (pos < lines.size()) {
    size_t end = lines.find('\n', pos);
    if (end == absl::string_view::npos) {
      return absl::InternalError("a line for the tree without its newline");
    }
    RETURN_IF_ERROR(
        AppendLeafLocked(own_log_, lines.substr(pos, end - pos), offset + pos));
    pos = end + 1;
  }
  return FlushLocked();
}

absl::Status TreeAppender::Sync() {
  for (int fd : {logs_fd_.get(), leaves_.get(), hashes_.get()}) {
    if (::fdatasync(fd) != 0) {
      return LastErrnoStatus(absl::StrCat("fdatasync(", folder_, "/...)"));
    }
  }
  return absl::OkStatus();
}

absl::Status TreeAppender::WriteSignedCheckpoint(const NoteSigner& signer,
                                                 const std::string& origin) {
  ASSIGN_OR_RETURN(Lock lock, LockAndCatchUp());
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
      ASSIGN_OR_RETURN(
          MerkleHash root,
          TreeRoot(checkpoint->size,
                   HashReaderOf(hashes_.get(), FolderPath(folder_, kHashesFile),
                                StoredHashCount(edge_.size()))));
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
  RETURN_IF_ERROR(Sync());
  Checkpoint checkpoint;
  checkpoint.origin = origin;
  checkpoint.size = edge_.size();
  checkpoint.root = edge_.Root();
  ASSIGN_OR_RETURN(std::string note,
                   SignNote(FormatCheckpoint(checkpoint), signer));
  return WriteFileAtomically(path, note, 0600);
}

}  // namespace garuda
