#include "lib/audit/verify.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/audit/line_format.h"
#include "lib/audit/paths.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"

namespace garuda {
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

// A read-only view of a whole file.
class MappedFile {
 public:
  static absl::StatusOr<MappedFile> Open(const std::string& path) {
    ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_RDONLY | O_NOFOLLOW));
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) {
      return LastErrnoStatus(absl::StrCat("fstat(", path, ")"));
    }
    if (!S_ISREG(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " is not a regular file"));
    }
    MappedFile file;
    if (st.st_size == 0) return file;
    void* data =
        ::mmap(nullptr, st.st_size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
    if (data == MAP_FAILED) {
      return LastErrnoStatus(absl::StrCat("mmap(", path, ")"));
    }
    ::madvise(data, st.st_size, MADV_SEQUENTIAL);
    file.data_ = static_cast<const char*>(data);
    file.size_ = static_cast<size_t>(st.st_size);
    return file;
  }
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  MappedFile& operator=(MappedFile&&) = delete;
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  }
  absl::string_view view() const { return absl::string_view(data_, size_); }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

audit::LogReport VerifyOneLog(
    const std::string& folder, const std::string& dir_name,
    const std::string& log, bool has_log_file, bool has_checkpoint_file,
    const std::map<uint64_t, std::string>* witnessed) {
  audit::LogReport report;
  std::string log_path = JoinPath(folder, absl::StrCat(log, kLogSuffix));
  std::string checkpoint_path = JoinPath(JoinPath(folder, kCheckpointFolder),
                                         absl::StrCat(log, kCheckpointSuffix));
  audit::AuditCheckpoint checkpoint;
  bool have_checkpoint = false;
  if (has_checkpoint_file) {
    absl::Status read = ReadJsonMessageFile(checkpoint_path, &checkpoint);
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
      absl::StatusOr<MappedFile> file = MappedFile::Open(log_path);
      if (!file.ok()) {
        report.set_status(kStatusUnreadable);
        report.set_message(std::string(file.status().message()));
      } else {
        report = VerifyLogContent(file->view(), log,
                                  have_checkpoint ? &checkpoint : nullptr,
                                  witnessed);
      }
    }
  }
  report.set_dir(dir_name);
  report.set_log(log);
  report.set_checkpoint(have_checkpoint);
  return report;
}

}  // namespace

audit::LogReport VerifyLogContent(
    absl::string_view content, absl::string_view log_name,
    const audit::AuditCheckpoint* checkpoint,
    const std::map<uint64_t, std::string>* witnessed) {
  audit::LogReport report;
  report.set_log(std::string(log_name));
  report.set_checkpoint(checkpoint != nullptr);
  if (witnessed != nullptr && witnessed->empty()) witnessed = nullptr;

  std::string genesis = GenesisHash(log_name);
  std::string prev_storage = genesis;
  absl::string_view prev = prev_storage;
  uint64_t expected_seq = 1;
  uint64_t line_number = 0;
  size_t pos = 0;
  bool torn = false;
  bool closed = false;  // the last line is the auditor's session_end

  if (checkpoint != nullptr && checkpoint->seq() == 0 &&
      checkpoint->hash() != genesis) {
    Fail(&report, kStatusCheckpointMismatch,
         "the checkpoint at seq 0 does not hold this log's genesis hash", 0, 0);
    return report;
  }
  while (pos < content.size()) {
    const void* found =
        std::memchr(content.data() + pos, '\n', content.size() - pos);
    if (found == nullptr) {
      torn = true;
      break;
    }
    size_t end = static_cast<const char*>(found) - content.data();
    absl::string_view line = content.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (line.size() > kMaxAuditLineBytes) {
      std::string where = absl::StrCat("line ", line_number);
      Fail(&report, kStatusModified,
           absl::StrCat(where, " is longer than any line the auditor writes"),
           line_number, expected_seq);
      break;
    }
    ParsedLine parsed = ParseAuditLine(line);
    auto where = [&] { return absl::StrCat("line ", line_number); };
    switch (parsed.kind) {
      case ParsedLine::Kind::kOk:
        break;
      case ParsedLine::Kind::kNotJson:
        Fail(&report, kStatusNotJson,
             absl::StrCat(where(), " (seq ", expected_seq,
                          " expected) is not JSON"),
             line_number, expected_seq);
        break;
      case ParsedLine::Kind::kUnknownVersion:
        Fail(&report, kStatusUnknownVersion,
             absl::StrCat(where(), " has format version ", parsed.version,
                          "; this verify knows version ", kAuditFormatVersion),
             line_number, expected_seq);
        break;
      case ParsedLine::Kind::kBadLayout:
        Fail(&report, kStatusModified,
             absl::StrCat(where(), " (seq ", expected_seq,
                          " expected) is not in the canonical form: modified"),
             line_number, expected_seq);
        break;
      case ParsedLine::Kind::kBadHash:
        Fail(
            &report, kStatusModified,
            absl::StrCat(where(), " (seq ", parsed.seq,
                         ") was modified: its hash does not match its content"),
            line_number, parsed.seq);
        break;
    }
    if (!report.status().empty()) break;
    if (parsed.seq != expected_seq) {
      std::string what =
          parsed.seq > expected_seq
              ? absl::StrCat("lines removed: seq ", expected_seq, " to ",
                             parsed.seq - 1, " are missing")
              : "lines inserted or reordered";
      Fail(&report, kStatusChainBroken,
           absl::StrCat(where(), " has seq ", parsed.seq, " where seq ",
                        expected_seq, " was expected: ", what),
           line_number, parsed.seq);
      break;
    }
    if (parsed.prev != prev) {
      Fail(&report, kStatusChainBroken,
           absl::StrCat(where(), " (seq ", parsed.seq,
                        ") does not follow the line before it (its prev hash "
                        "differs): lines inserted, removed or reordered, or a "
                        "line from another log"),
           line_number, parsed.seq);
      break;
    }
    if (checkpoint != nullptr && parsed.seq == checkpoint->seq() &&
        parsed.hash != checkpoint->hash()) {
      Fail(&report, kStatusCheckpointMismatch,
           absl::StrCat("the line at seq ", parsed.seq,
                        " is not the one the checkpoint holds: the log was "
                        "rewritten (or the checkpoint replaced)"),
           line_number, parsed.seq);
      break;
    }
    if (witnessed != nullptr) {
      auto head = witnessed->find(parsed.seq);
      if (head != witnessed->end() && head->second != parsed.hash) {
        Fail(&report, kStatusWitnessMismatch,
             absl::StrCat("the line at seq ", parsed.seq,
                          " differs from the head the witness holds: the "
                          "chain was rewritten"),
             line_number, parsed.seq);
        break;
      }
    }
    prev = parsed.hash;
    closed = absl::StartsWith(
        parsed.event, absl::StrCat("{\"kind\":\"", kSessionEndKind, "\""));
    ++expected_seq;
  }
  const uint64_t last_seq = expected_seq - 1;
  report.set_lines(report.status().empty() ? line_number : line_number - 1);
  report.set_last_seq(report.status().empty() ? last_seq : expected_seq - 1);
  if (!report.status().empty()) return report;

  if (checkpoint != nullptr && checkpoint->seq() > last_seq) {
    uint64_t cut = checkpoint->seq() - last_seq;
    Fail(&report, kStatusCut,
         absl::StrCat(Lines(cut), " cut back from the checkpoint at seq ",
                      checkpoint->seq(), ": the log ends at seq ", last_seq,
                      torn ? " and a torn line" : ""),
         line_number + 1, last_seq + 1);
    return report;
  }
  std::string note;
  if (checkpoint != nullptr && checkpoint->seq() < last_seq) {
    if (closed && !torn) {
      // The auditor checkpoints after the session_end line: a closed log
      // with an older checkpoint had its checkpoint put back.
      Fail(&report, kStatusCheckpointBehind,
           absl::StrCat("the checkpoint is at seq ", checkpoint->seq(),
                        " but the closed log goes on to seq ", last_seq,
                        ": an older checkpoint was put back"),
           0, checkpoint->seq());
      return report;
    }
    // An open log (or one whose auditor stopped without closing it) may run
    // ahead of its checkpoint by the lines of an unsynced group.
    note = absl::StrCat(", ", Lines(last_seq - checkpoint->seq()),
                        " after the checkpoint at seq ", checkpoint->seq(),
                        " (not closed: still open, or the auditor stopped)");
  }
  if (witnessed != nullptr) {
    uint64_t witnessed_seq = witnessed->rbegin()->first;
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
    report.set_message(
        absl::StrCat("torn tail: line ", line_number + 1, " is incomplete (",
                     content.size() - pos,
                     " bytes without a newline), a write cut short "
                     "by a crash; the ",
                     Lines(line_number), " before it are ok"));
    report.set_line(line_number + 1);
    report.set_seq(last_seq + 1);
    return report;
  }
  report.set_status(kStatusOk);
  std::string message =
      absl::StrCat(Lines(line_number), ", last seq ", last_seq);
  absl::StrAppend(&message, closed ? ", closed" : "");
  if (checkpoint != nullptr) {
    absl::StrAppend(&message, note.empty() ? ", matches its checkpoint" : note);
  }
  if (witnessed != nullptr) {
    absl::StrAppend(&message, ", witnessed up to seq ", report.witnessed_seq());
  }
  report.set_message(message);
  return report;
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
      reports.push_back(VerifyOneLog(
          folder, dir, log, logs.count(log) > 0, checkpoints.count(log) > 0,
          heads == witness.end() ? nullptr : &heads->second));
    }
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
