#include "lib/apply/journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace apply_internal {
namespace {

constexpr char kMagic[] = "garuda-apply-journal 1";
// A journal holds one line per path of a list (a few hundred bytes each);
// this bounds what recovery reads from a damaged or planted file.
constexpr size_t kMaxJournalBytes = size_t{1} << 30;

const char* KindName(StepKind kind) {
  switch (kind) {
    case StepKind::kMoveAside:
      return "aside";
    case StepKind::kExchange:
      return "exchange";
    case StepKind::kPlace:
      return "place";
    case StepKind::kMakeFolder:
      return "mkdir";
    case StepKind::kChangeMode:
      return "chmod";
  }
  return "?";
}

bool KindOfName(absl::string_view name, StepKind* kind) {
  for (StepKind k :
       {StepKind::kMoveAside, StepKind::kExchange, StepKind::kPlace,
        StepKind::kMakeFolder, StepKind::kChangeMode}) {
    if (name == KindName(k)) {
      *kind = k;
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<UniqueFd> WriteJournal(const std::string& record,
                                      const JournalPlan& plan) {
  std::string text =
      absl::StrCat(kMagic, "\t", absl::CEscape(plan.work_name), "\n");
  for (const PlannedTemp& temp : plan.temps) {
    absl::StrAppend(&text, "temp\t", absl::CEscape(temp.folder), "\t",
                    absl::CEscape(temp.name), "\n");
  }
  for (const PlannedStep& step : plan.steps) {
    absl::StrAppend(&text, "step\t", KindName(step.kind), "\t",
                    absl::CEscape(step.path), "\t", absl::CEscape(step.temp),
                    "\t", step.temp_in_work ? 1 : 0, "\t", step.mode, "\t",
                    step.old_mode, "\n");
  }
  std::string path = JoinPath(record, kJournalName);
  ASSIGN_OR_RETURN(
      UniqueFd fd,
      OpenFile(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0600));
  RETURN_IF_ERROR(WriteAll(fd.get(), text));
  if (::fdatasync(fd.get()) != 0) {
    return LastErrnoStatus(absl::StrCat("fdatasync(", path, ")"));
  }
  RETURN_IF_ERROR(SyncParentDirectory(path));
  return fd;
}

absl::Status MarkCommitted(int journal_fd, const std::string& record) {
  std::string path = JoinPath(record, kJournalName);
  RETURN_IF_ERROR(WriteAll(journal_fd, "committed\n"));
  if (::fdatasync(journal_fd) != 0) {
    return LastErrnoStatus(absl::StrCat("fdatasync(", path, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<JournalPlan> ReadJournal(const std::string& record) {
  std::string path = JoinPath(record, kJournalName);
  absl::StatusOr<UniqueFd> fd =
      OpenFile(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  RETURN_IF_ERROR(fd.status());
  struct stat st;
  if (::fstat(fd->get(), &st) != 0) {
    return LastErrnoStatus(absl::StrCat("fstat(", path, ")"));
  }
  if (!S_ISREG(st.st_mode) ||
      static_cast<size_t>(st.st_size) > kMaxJournalBytes) {
    return absl::DataLossError(
        absl::StrCat(path, ": not a regular file of at most ", kMaxJournalBytes,
                     " bytes; move it away to apply in this project again"));
  }
  ASSIGN_OR_RETURN(std::string text, ReadAll(fd->get()));
  // The plan is synced before the project is touched, so a journal cut in
  // its last line was cut before any step: the whole lines are enough.
  text.resize(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  JournalPlan plan;
  int line_number = 0;
  auto bad = [&](absl::string_view what) {
    return absl::DataLossError(absl::StrCat(
        path, ":", line_number, ": ", what,
        "; the project may hold a half-applied change: compare it with the "
        "undo record in ",
        record, ", then remove the journal"));
  };
  bool first = true;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (line.empty()) continue;
    std::vector<absl::string_view> fields = absl::StrSplit(line, '\t');
    if (first) {
      first = false;
      if (fields.size() != 2 || fields[0] != kMagic ||
          !absl::CUnescape(fields[1], &plan.work_name)) {
        return bad("not an apply journal");
      }
      continue;
    }
    if (fields[0] == "committed" && fields.size() == 1) {
      plan.committed = true;
    } else if (fields[0] == "temp" && fields.size() == 3) {
      PlannedTemp temp;
      if (!absl::CUnescape(fields[1], &temp.folder) ||
          !absl::CUnescape(fields[2], &temp.name)) {
        return bad("a temp line that does not parse");
      }
      plan.temps.push_back(std::move(temp));
    } else if (fields[0] == "step" && fields.size() == 7) {
      PlannedStep step;
      int in_work = 0;
      if (!KindOfName(fields[1], &step.kind) ||
          !absl::CUnescape(fields[2], &step.path) ||
          !absl::CUnescape(fields[3], &step.temp) ||
          !absl::SimpleAtoi(fields[4], &in_work) ||
          !absl::SimpleAtoi(fields[5], &step.mode) ||
          !absl::SimpleAtoi(fields[6], &step.old_mode)) {
        return bad("a step line that does not parse");
      }
      step.temp_in_work = in_work != 0;
      plan.steps.push_back(std::move(step));
    } else {
      return bad("an unknown line");
    }
  }
  if (first) return bad("empty");
  return plan;
}

}  // namespace apply_internal
}  // namespace garuda
