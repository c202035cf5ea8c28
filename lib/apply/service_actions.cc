#include "lib/apply/service_actions.h"

#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "lib/apply/apply.h"
#include "lib/apply/outcome.h"
#include "lib/base/errno_status.h"
#include "lib/base/status_macros.h"
#include "lib/ipc/sealed_memfd.h"
#include "lib/question/question.h"

namespace garuda {
namespace {

constexpr size_t kMaxSessionIdBytes = 128;

ServedOutcome FromResult(const ApplyResult& result, bool undo) {
  ServedOutcome outcome;
  switch (result.outcome) {
    case ApplyOutcome::kApplied:
      outcome.kind = ServedOutcome::Kind::kApplied;
      outcome.files = result.paths;
      return outcome;
    case ApplyOutcome::kConflict:
      outcome.kind = ServedOutcome::Kind::kConflict;
      break;
    case ApplyOutcome::kRefused:
      outcome.kind = ServedOutcome::Kind::kRefused;
      break;
  }
  outcome.line = NotDoneLine(result, undo);
  outcome.conflicts = result.conflicts;
  return outcome;
}

}  // namespace

absl::Status CheckServedSessionId(const std::string& session_id) {
  if (session_id.size() > kMaxSessionIdBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("session_id of ", session_id.size(), " bytes is over ",
                     kMaxSessionIdBytes));
  }
  for (char c : session_id) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') {
      return absl::InvalidArgumentError(
          "session_id may hold only letters, digits, '.', '_' and '-'");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ChangeSet> ReadServedList(int fd, const std::string& name,
                                         const std::string& project) {
  // Sealed, so complete (a pipe whose writer never closes would hold the
  // applier forever) and unchangeable by the agent or anyone else who
  // holds it while the question shows it.
  RETURN_IF_ERROR(ipc::CheckSealed(fd, name));
  if (::lseek(fd, 0, SEEK_SET) != 0) {
    return LastErrnoStatus(absl::StrCat("lseek ", name));
  }
  return ReadChangeSetForProject(fd, name, project);
}

absl::StatusOr<ServedOutcome> ApplyServedList(ChangeSet change_set,
                                              const std::string& project,
                                              const std::string& undo_root,
                                              const std::string& reason,
                                              const std::string& session_id) {
  RETURN_IF_ERROR(CheckServedSessionId(session_id));
  if (change_set.NoChanges()) {
    ServedOutcome none;
    none.kind = ServedOutcome::Kind::kNoChanges;
    none.line = kNoChangesLine;
    return none;
  }
  if (!reason.empty()) change_set.header.set_command(reason);
  ApplyOptions options;
  options.project = project;
  options.undo_root = undo_root;
  options.session_id = session_id;
  ASSIGN_OR_RETURN(ApplyResult result, ApplyChangeSet(change_set, options));
  ServedOutcome outcome = FromResult(result, /*undo=*/false);
  if (outcome.kind == ServedOutcome::Kind::kApplied) {
    outcome.line = kAppliedLine;
    outcome.undo_id = result.undo_id;
  }
  return outcome;
}

absl::StatusOr<ServedOutcome> UndoServedApply(const std::string& project,
                                              const std::string& undo_root,
                                              const std::string& undo_id,
                                              const std::string& session_id) {
  std::string id = undo_id;
  if (id.empty()) {
    if (session_id.empty()) {
      return absl::InvalidArgumentError(
          "UndoApply needs an undo_id or a session_id");
    }
    RETURN_IF_ERROR(CheckServedSessionId(session_id));
    ASSIGN_OR_RETURN(std::vector<UndoRecordInfo> records,
                     ListUndoRecords(undo_root, project));
    for (const UndoRecordInfo& record : records) {  // newest first
      if (record.session_id == session_id && record.undone_by.empty()) {
        id = record.id;
        break;
      }
    }
    if (id.empty()) {
      return absl::NotFoundError(absl::StrCat(
          "session ", session_id, " has no apply left to undo in ", project));
    }
  }
  ApplyOptions options;
  options.project = project;
  options.undo_root = undo_root;
  ASSIGN_OR_RETURN(ApplyResult result, UndoApply(id, options));
  ServedOutcome outcome = FromResult(result, /*undo=*/true);
  outcome.undo_id = id;
  if (outcome.kind == ServedOutcome::Kind::kApplied)
    outcome.line = UndoneLine(id);
  return outcome;
}

}  // namespace garuda
