#include "lib/audit/verify.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/audit/line_format.h"
#include "lib/audit/paths.h"
#include "lib/audit/tree_verify.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"

namespace garuda {

using audit::AuditCheckpoint;
using audit::LogReport;

namespace {

std::string Lines(uint64_t n) {
  return absl::StrCat(n, n == 1 ? " line" : " lines");
}

void Fail(audit::LogReport* report, const char* status, std::string message,
          uint64_t line_number, uint64_t seq) {
  report->set_status(status);
  report->set_message(std::move(message));
  report->set_line(line_number);
  report->set_seq(seq);
}

// The names in `folder` that end in `suffix`, without it. A missing folder
// is empty.
absl::StatusOr<std::set<std::string>> ListNames(const std::string& folder,
                                                absl::string_view suffix) {
  std::set<std::string> names;
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) {
    if (errno == ENOENT) return names;
    return LastErrnoStatus(absl::StrCat("opendir(", folder, ")"));
  }
  while (struct dirent* entry = ::readdir(dir)) {
    absl::string_view name = entry->d_name;
    if (name.size() > suffix.size() && absl::EndsWith(name, suffix) &&
        name[0] != '.') {
      names.insert(std::string(name.substr(0, name.size() - suffix.size())));
    }
  }
  ::closedir(dir);
  return names;
}

// The hash chain of one log, checked line by line as the bytes arrive, so
// the log is read in bounded memory.
class ChainCheck {
 public:
  ChainCheck(absl::string_view log_name, const AuditCheckpoint* checkpoint,
             const std::map<uint64_t, std::string>* witnessed)
      : checkpoint_(checkpoint),
        witnessed_(witnessed != nullptr && witnessed->empty() ? nullptr
                                                              : witnessed),
        genesis_(GenesisHash(log_name)),
        prev_(genesis_) {
    report_.set_log(std::string(log_name));
    report_.set_checkpoint(checkpoint != nullptr);
    if (checkpoint != nullptr && checkpoint->seq() == 0 &&
        checkpoint->hash() != genesis_) {
      Fail(&report_, kStatusCheckpointMismatch,
           "the checkpoint at seq 0 does not hold this log's genesis hash", 0,
           0);
      done_ = true;
    }
  }

  // False once a finding ends the check.
  bool ok() const { return !done_; }

  // One whole line without its newline.
  void Line(absl::string_view line);

  // The bytes after the last newline (a torn tail) are `torn_bytes` long.
  LogReport Finish(size_t torn_bytes);

  // A finding that is not about one line (the file shrank while read).
  void Stop(const char* status, std::string message) {
    if (done_) return;
    Fail(&report_, status, std::move(message), line_number_ + 1, expected_seq_);
    ++line_number_;  // counted as the failing line, as Line() does
    done_ = true;
  }

 private:
  LogReport report_;
  const AuditCheckpoint* checkpoint_;
  const std::map<uint64_t, std::string>* witnessed_;
  std::string genesis_;
  std::string prev_;
  uint64_t expected_seq_ = 1;
  uint64_t line_number_ = 0;
  bool closed_ = false;  // the last line is the auditor's session_end
  bool done_ = false;
};

void ChainCheck::Line(absl::string_view line) {
  if (done_) return;
  ++line_number_;
  auto where = [&] { return absl::StrCat("line ", line_number_); };
  done_ = true;  // until the line is found whole
  if (line.size() > kMaxAuditLineBytes) {
    Fail(&report_, kStatusModified,
         absl::StrCat(where(), " is longer than any line the auditor writes"),
         line_number_, expected_seq_);
    return;
  }
  ParsedLine parsed = ParseAuditLine(line);
  switch (parsed.kind) {
    case ParsedLine::Kind::kOk:
      break;
    case ParsedLine::Kind::kNotJson:
      Fail(&report_, kStatusNotJson,
           absl::StrCat(where(), " (seq ", expected_seq_,
                        " expected) is not JSON"),
           line_number_, expected_seq_);
      return;
    case ParsedLine::Kind::kUnknownVersion:
      Fail(&report_, kStatusUnknownVersion,
           absl::StrCat(where(), " has format version ", parsed.version,
                        "; this verify knows version ", kAuditFormatVersion),
           line_number_, expected_seq_);
      return;
    case ParsedLine::Kind::kBadLayout:
      Fail(&report_, kStatusModified,
           absl::StrCat(where(), " (seq ", expected_seq_,
                        " expected) is not in the canonical form: modified"),
           line_number_, expected_seq_);
      return;
    case ParsedLine::Kind::kBadUtf8:
      Fail(&report_, kStatusModified,
           absl::StrCat(where(), " (seq ", expected_seq_,
                        " expected) is not valid UTF-8, which the canonical "
                        "form never holds: modified"),
           line_number_, expected_seq_);
      return;
    case ParsedLine::Kind::kBadHash:
      Fail(&report_, kStatusModified,
           absl::StrCat(where(), " (seq ", parsed.seq,
                        ") was modified: its hash does not match its content"),
           line_number_, parsed.seq);
      return;
  }
  if (parsed.seq != expected_seq_) {
    std::string what =
        parsed.seq > expected_seq_
            ? absl::StrCat("lines removed: seq ", expected_seq_, " to ",
                           parsed.seq - 1, " are missing")
            : "lines inserted or reordered";
    Fail(&report_, kStatusChainBroken,
         absl::StrCat(where(), " has seq ", parsed.seq, " where seq ",
                      expected_seq_, " was expected: ", what),
         line_number_, parsed.seq);
    return;
  }
  if (parsed.prev != prev_) {
    Fail(&report_, kStatusChainBroken,
         absl::StrCat(where(), " (seq ", parsed.seq,
                      ") does not follow the line before it (its prev hash "
                      "differs): lines inserted, removed or reordered, or a "
                      "line from another log"),
         line_number_, parsed.seq);
    return;
  }
  if (checkpoint_ != nullptr && parsed.seq == checkpoint_->seq() &&
      parsed.hash != checkpoint_->hash()) {
    Fail(&report_, kStatusCheckpointMismatch,
         absl::StrCat("the line at seq ", parsed.seq,
                      " is not the one the checkpoint holds: the log was "
                      "rewritten (or the checkpoint replaced)"),
         line_number_, parsed.seq);
    return;
  }
  if (witnessed_ != nullptr) {
    auto head = witnessed_->find(parsed.seq);
    if (head != witnessed_->end() && head->second != parsed.hash) {
      Fail(&report_, kStatusWitnessMismatch,
           absl::StrCat("the line at seq ", parsed.seq,
                        " differs from the head the witness holds: the "
                        "chain was rewritten"),
           line_number_, parsed.seq);
      return;
    }
  }
  done_ = false;
  prev_.assign(parsed.hash.data(), parsed.hash.size());
  closed_ = absl::StartsWith(
      parsed.event, absl::StrCat("{\"kind\":\"", kSessionEndKind, "\""));
  ++expected_seq_;
}

LogReport ChainCheck::Finish(size_t torn_bytes) {
  LogReport& report = report_;
  const bool torn = torn_bytes > 0;
  const uint64_t line_number = line_number_;
  const uint64_t last_seq = expected_seq_ - 1;
  report.set_lines(report.status().empty() ? line_number : line_number - 1);
  report.set_last_seq(last_seq);
  if (!report.status().empty()) return report;

  if (checkpoint_ != nullptr && checkpoint_->seq() > last_seq) {
    uint64_t cut = checkpoint_->seq() - last_seq;
    Fail(&report, kStatusCut,
         absl::StrCat(Lines(cut), " cut back from the checkpoint at seq ",
                      checkpoint_->seq(), ": the log ends at seq ", last_seq,
                      torn ? " and a torn line" : ""),
         line_number + 1, last_seq + 1);
    return report;
  }
  std::string note;
  if (checkpoint_ != nullptr && checkpoint_->seq() < last_seq) {
    if (closed_ && !torn) {
      // The auditor checkpoints after the session_end line: a closed log
      // with an older checkpoint had its checkpoint put back.
      Fail(&report, kStatusCheckpointBehind,
           absl::StrCat("the checkpoint is at seq ", checkpoint_->seq(),
                        " but the closed log goes on to seq ", last_seq,
                        ": an older checkpoint was put back"),
           0, checkpoint_->seq());
      return report;
    }
    // An open log (or one whose auditor stopped without closing it) may run
    // ahead of its checkpoint by the lines of an unsynced group.
    note = absl::StrCat(", ", Lines(last_seq - checkpoint_->seq()),
                        " after the checkpoint at seq ", checkpoint_->seq(),
                        " (not closed: still open, or the auditor stopped)");
  }
  if (witnessed_ != nullptr) {
    uint64_t witnessed_seq = witnessed_->rbegin()->first;
    report.set_witnessed_seq(witnessed_seq);
    if (witnessed_seq > last_seq) {
      Fail(
          &report, kStatusWitnessMismatch,
          absl::StrCat("rolled back: the log ends at seq ", last_seq,
                       " but the witness holds its head at seq ", witnessed_seq,
                       " (", Lines(witnessed_seq - last_seq), " missing)"),
          line_number + 1, last_seq + 1);
      return report;
    }
  }
  if (torn) {
    report.set_status(kStatusTornTail);
    report.set_message(absl::StrCat(
        "torn tail: line ", line_number + 1, " is incomplete (", torn_bytes,
        " bytes without a newline), a write cut short by a crash; the ",
        Lines(line_number), " before it are ok"));
    report.set_line(line_number + 1);
    report.set_seq(last_seq + 1);
    return report;
  }
  report.set_status(kStatusOk);
  std::string message =
      absl::StrCat(Lines(line_number), ", last seq ", last_seq);
  absl::StrAppend(&message, closed_ ? ", closed" : "");
  if (checkpoint_ != nullptr) {
    absl::StrAppend(&message, note.empty() ? ", matches its checkpoint" : note);
  }
  if (witnessed_ != nullptr) {
    absl::StrAppend(&message, ", witnessed up to seq ", report.witnessed_seq());
  }
  report.set_message(message);
  return report;
}

// Reads the log at `path` in pieces and checks it. Only the bytes present
// when it was opened are read (an auditor may be appending); fewer is a
// finding, never a crash (nothing is mapped).
LogReport VerifyLogFile(const std::string& path, absl::string_view log_name,
                        const AuditCheckpoint* checkpoint,
                        const std::map<uint64_t, std::string>* witnessed,
                        const std::function<void()>& after_first_read) {
  LogReport unreadable;
  unreadable.set_status(kStatusUnreadable);
  absl::StatusOr<UniqueFd> fd = OpenRegularFile(path);
  struct stat st;
  if (fd.ok() && ::fstat(fd->get(), &st) != 0) {
    fd = LastErrnoStatus(absl::StrCat("fstat(", path, ")"));
  }
  if (!fd.ok()) {
    unreadable.set_message(std::string(fd.status().message()));
    return unreadable;
  }
  ::posix_fadvise(fd->get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  const uint64_t size_at_open = static_cast<uint64_t>(st.st_size);
  // Room for the longest line the auditor writes, its newline, and a read.
  static constexpr size_t kReadBytes = size_t{1} << 20;
  static constexpr size_t kBufferBytes = kMaxAuditLineBytes + 1 + kReadBytes;
  std::unique_ptr<char[]> buffer(new char[kBufferBytes]);
  size_t have = 0;  // bytes in buffer not yet checked
  uint64_t read_total = 0;
  bool first_read = true;
  ChainCheck check(log_name, checkpoint, witnessed);
  while (check.ok() && read_total < size_at_open) {
    size_t want = static_cast<size_t>(
        std::min<uint64_t>(kBufferBytes - have, size_at_open - read_total));
    ssize_t n = ::read(fd->get(), buffer.get() + have, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      unreadable.set_message(std::string(
          LastErrnoStatus(absl::StrCat("read(", path, ")")).message()));
      return unreadable;
    }
    if (n == 0) break;  // shorter than at the open: see below
    have += static_cast<size_t>(n);
    read_total += static_cast<uint64_t>(n);
    if (first_read && after_first_read) after_first_read();
    first_read = false;
    size_t pos = 0;
    while (check.ok()) {
      const void* found = std::memchr(buffer.get() + pos, '\n', have - pos);
      if (found == nullptr) break;
      size_t end = static_cast<const char*>(found) - buffer.get();
      check.Line(absl::string_view(buffer.get() + pos, end - pos));
      pos = end + 1;
    }
    if (!check.ok()) break;
    std::memmove(buffer.get(), buffer.get() + pos, have - pos);
    have -= pos;
    if (have > kMaxAuditLineBytes) {
      // No newline within the longest line: it is longer.
      check.Line(absl::string_view(buffer.get(), have));
    }
  }
  if (check.ok()) {
    // Cut while we read: fewer bytes came than the open saw, or the file is
    // shorter now than what was read.
    uint64_t size_now = size_at_open;
    if (::fstat(fd->get(), &st) == 0) {
      size_now = static_cast<uint64_t>(st.st_size);
    }
    if (read_total < size_at_open || size_now < read_total) {
      check.Stop(
          kStatusCut,
          absl::StrCat("the log shrank while it was read: ", size_at_open,
                       " bytes when opened, ", std::min(read_total, size_now),
                       " now: lines were cut or the log rewritten "
                       "while verify ran"));
    }
  }
  return check.Finish(have);
}

LogReport VerifyOneLog(const std::string& folder, const std::string& dir_name,
                       const std::string& log, bool has_log_file,
                       bool has_checkpoint_file,
                       const std::map<uint64_t, std::string>* witnessed,
                       const std::function<void()>& after_first_read) {
  LogReport report;
  std::string log_path = JoinPath(folder, absl::StrCat(log, kLogSuffix));
  std::string checkpoint_path = JoinPath(JoinPath(folder, kCheckpointFolder),
                                         absl::StrCat(log, kCheckpointSuffix));
  audit::AuditCheckpoint checkpoint;
  bool have_checkpoint = false;
  if (has_checkpoint_file) {
    absl::Status read = ReadJsonMessageFile(checkpoint_path, &checkpoint,
                                            CheckpointFileOptions());
    if (!read.ok()) {
      report.set_status(kStatusCheckpointMismatch);
      report.set_message(
          absl::StrCat("the checkpoint is not valid: ", read.message()));
    } else if (checkpoint.log() != log || !IsHexDigest(checkpoint.hash())) {
      report.set_status(kStatusCheckpointMismatch);
      report.set_message(absl::StrCat(checkpoint_path,
                                      " is not a checkpoint of this log (it "
                                      "names log \"",
                                      checkpoint.log(), "\")"));
    } else {
      have_checkpoint = true;
    }
  }
  if (report.status().empty()) {
    if (!has_log_file) {
      report.set_status(kStatusDeleted);
      if (have_checkpoint) {
        report.set_message(absl::StrCat(
            "log deleted: ", log_path,
            " is missing but its checkpoint is at seq ", checkpoint.seq()));
        report.set_seq(checkpoint.seq());
      } else {
        uint64_t last = witnessed->rbegin()->first;
        report.set_message(absl::StrCat(
            "log deleted: ", log_path,
            " is missing but the witness holds its head at seq ", last));
        report.set_seq(last);
      }
    } else {
      report =
          VerifyLogFile(log_path, log, have_checkpoint ? &checkpoint : nullptr,
                        witnessed, after_first_read);
    }
  }
  report.set_dir(dir_name);
  report.set_log(log);
  report.set_checkpoint(have_checkpoint);
  return report;
}

}  // namespace

LogReport VerifyLogContent(absl::string_view content,
                           absl::string_view log_name,
                           const AuditCheckpoint* checkpoint,
                           const std::map<uint64_t, std::string>* witnessed) {
  ChainCheck check(log_name, checkpoint, witnessed);
  size_t pos = 0;
  while (check.ok() && pos < content.size()) {
    const void* found =
        std::memchr(content.data() + pos, '\n', content.size() - pos);
    if (found == nullptr) break;
    size_t end = static_cast<const char*>(found) - content.data();
    check.Line(content.substr(pos, end - pos));
    pos = end + 1;
  }
  return check.Finish(content.size() - pos);
}

absl::StatusOr<std::vector<audit::LogReport>> VerifyAuditLogs(
    const VerifyOptions& options) {
  WitnessedHeads witness;
  if (!options.witness_file.empty()) {
    ASSIGN_OR_RETURN(witness, ReadWitnessStore(options.witness_file));
  }
  std::set<std::string> dirs;
  if (options.all) {
    DIR* root = ::opendir(options.audit_root.c_str());
    if (root == nullptr && errno != ENOENT) {
      return LastErrnoStatus(absl::StrCat("opendir(", options.audit_root, ")"));
    }
    if (root != nullptr) {
      while (struct dirent* entry = ::readdir(root)) {
        if (entry->d_name[0] == '.') continue;
        struct stat st;
        std::string path = JoinPath(options.audit_root, entry->d_name);
        if (::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
          dirs.insert(entry->d_name);
        }
      }
      ::closedir(root);
    }
    for (const auto& [key, heads] : witness) dirs.insert(key.first);
  } else {
    ASSIGN_OR_RETURN(std::string dir, ProjectAuditFolderName(options.project));
    dirs.insert(dir);
  }

  std::vector<audit::LogReport> reports;
  for (const std::string& dir : dirs) {
    std::string folder = JoinPath(options.audit_root, dir);
    // The tree hashes every line a second time (as a leaf): on a thread of
    // its own it runs beside the chains instead of after them.
    TreeVerifyOptions tree;
    tree.project_folder = folder;
    tree.dir = dir;
    tree.log_key = options.log_key;
    tree.witness_keys = options.witness_keys;
    std::optional<audit::LogReport> tree_report;
    std::thread tree_thread(
        [&tree, &tree_report] { tree_report = VerifyTree(tree); });
    // Joined on every way out of this iteration, early returns included.
    struct Join {
      std::thread& thread;
      ~Join() {
        if (thread.joinable()) thread.join();
      }
    } join{tree_thread};
    ASSIGN_OR_RETURN(std::set<std::string> logs, ListNames(folder, kLogSuffix));
    ASSIGN_OR_RETURN(
        std::set<std::string> checkpoints,
        ListNames(JoinPath(folder, kCheckpointFolder), kCheckpointSuffix));
    std::set<std::string> names = logs;
    names.insert(checkpoints.begin(), checkpoints.end());
    for (const auto& [key, heads] : witness) {
      if (key.first == dir) names.insert(key.second);
    }
    for (const std::string& log : names) {
      auto heads = witness.find({dir, log});
      std::function<void()> after_first_read;
      if (options.after_first_read) {
        std::string path = JoinPath(folder, absl::StrCat(log, kLogSuffix));
        after_first_read = [&options, path] { options.after_first_read(path); };
      }
      reports.push_back(VerifyOneLog(
          folder, dir, log, logs.count(log) > 0, checkpoints.count(log) > 0,
          heads == witness.end() ? nullptr : &heads->second, after_first_read));
    }
    tree_thread.join();
    if (tree_report) reports.push_back(*std::move(tree_report));
  }
  return reports;
}

bool IsFailure(const audit::LogReport& report) {
  return report.status() != kStatusOk && report.status() != kStatusTornTail &&
         report.status() != kStatusUnreadable;
}

std::string FormatLogReport(const audit::LogReport& report) {
  return absl::StrCat(report.dir(), "/", report.log(), ": ", report.status(),
                      ": ", report.message());
}

}  // namespace garuda
