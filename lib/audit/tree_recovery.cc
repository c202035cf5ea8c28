// TreeAppender's recovery at open (docs/audit.md, "Durability of the
// tree"): the tail past tree/durable checked against the logs, the lines
// the tree lacks taken up from them, and tree/covered, which tells how far
// each log is covered without reading the whole tree.
#include <dirent.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "lib/audit/line_format.h"
#include "lib/audit/paths.h"
#include "lib/audit/tree_files.h"
#include "lib/audit/tree_store.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"

namespace garuda {

absl::Status TreeAppender::RecoverLocked(
    const std::string& project_audit_folder) {
  RETURN_IF_ERROR(CatchUpLogsLocked());
  // How far each log is in the tree already: tree/covered, brought up to
  // date with the entries past it (not the whole tree).
  RETURN_IF_ERROR(LoadCoverageLocked());
  RETURN_IF_ERROR(AdvanceCoverageLocked());
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
        found == log_numbers_.end() || found->second >= covered_.size()
            ? 0
            : covered_[found->second];
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
                            edge_.size(), &entry_bytes_read_));
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
      MerkleEdge::Load(from, HashReaderOf(entries_.get(), entries, size,
                                          &entry_bytes_read_)));
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
                               entry_matches_line, &good, &entry_bytes_read_));
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

absl::Status TreeAppender::LoadCoverageLocked() {
  covered_.clear();
  covered_leaves_ = 0;
  // Anything but a whole file whose tree is a prefix of this one (missing:
  // a tree from before the file, torn, stale after a cut back) means the
  // whole of tree/entries is read instead, as before the file existed.
  absl::StatusOr<std::string> text =
      ReadRegularFile(FolderPath(folder_, kCoveredFile), [] {
        RegularFileOptions options;
        options.max_bytes = kMaxLogsFileBytes;
        return options;
      }());
  if (!text.ok() || text->size() < kDurableMarkBytes) return absl::OkStatus();
  std::optional<TreeDurableMark> mark = ParseTreeDurableMark(
      absl::string_view(*text).substr(0, kDurableMarkBytes));
  if (!mark || mark->size > edge_.size() || text->back() != '\n') {
    return absl::OkStatus();
  }
  std::vector<uint64_t> ends;
  absl::string_view rest = absl::string_view(*text).substr(kDurableMarkBytes);
  rest.remove_suffix(rest.empty() ? 0 : 1);
  if (!rest.empty()) {
    for (absl::string_view end : absl::StrSplit(rest, '\n')) {
      uint64_t value = 0;
      if (!absl::SimpleAtoi(end, &value)) return absl::OkStatus();
      ends.push_back(value);
    }
  }
  absl::StatusOr<MerkleHash> root =
      TreeRoot(mark->size,
               HashReaderOf(entries_.get(), FolderPath(folder_, kEntriesFile),
                            edge_.size(), &entry_bytes_read_));
  if (!root.ok() || *root != mark->root) return absl::OkStatus();
  covered_ = std::move(ends);
  covered_leaves_ = mark->size;
  return absl::OkStatus();
}

absl::Status TreeAppender::AdvanceCoverageLocked() {
  if (covered_leaves_ > edge_.size()) {
    // The tree was cut back under it: counted again from the start.
    covered_.clear();
    covered_leaves_ = 0;
  }
  if (covered_leaves_ == edge_.size()) return absl::OkStatus();
  if (covered_.size() < log_numbers_.size()) {
    covered_.resize(log_numbers_.size(), 0);
  }
  uint64_t stopped = 0;
  RETURN_IF_ERROR(VisitEntries(
      entries_.get(), FolderPath(folder_, kEntriesFile), covered_leaves_,
      edge_.size(),
      [&](const char* record) {
        const uint64_t log = GetBigEndian(record, 4);
        const uint64_t end =
            GetBigEndian(record + 8, 8) + GetBigEndian(record + 4, 4) + 1;
        if (log < covered_.size()) {
          covered_[log] = std::max(covered_[log], end);
        }
        return true;
      },
      &stopped, &entry_bytes_read_));
  covered_leaves_ = edge_.size();
  return absl::OkStatus();
}

absl::Status TreeAppender::WriteCoverageLocked() {
  RETURN_IF_ERROR(AdvanceCoverageLocked());
  std::string text = absl::StrFormat("%020u %s\n", covered_leaves_,
                                     Base64Encode(HashBytes(edge_.Root())));
  for (uint64_t end : covered_) absl::StrAppend(&text, end, "\n");
  // Like tree/durable, without a sync of its own: lost or torn, the next
  // open reads more of tree/entries, never less than it must.
  const std::string path = FolderPath(folder_, kCoveredFile);
  if (::pwrite(covered_fd_.get(), text.data(), text.size(), 0) !=
          static_cast<ssize_t>(text.size()) ||
      ::ftruncate(covered_fd_.get(), static_cast<off_t>(text.size())) != 0) {
    return LastErrnoStatus(absl::StrCat("write(", path, ")"));
  }
  return absl::OkStatus();
}

}  // namespace garuda
