#include "tests/agent/apply_core.h"

#include "lib/apply/apply.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace testing {
namespace {

CoreApplyResult Convert(const ApplyResult& result) {
  CoreApplyResult core;
  core.kind =
      result.outcome == ApplyOutcome::kApplied    ? CoreApplyResult::kApplied
      : result.outcome == ApplyOutcome::kConflict ? CoreApplyResult::kConflict
                                                  : CoreApplyResult::kRefused;
  core.problems = result.problems;
  core.undo_id = result.undo_id;
  core.paths = result.paths;
  return core;
}

}  // namespace

absl::StatusOr<CoreApplyResult> CoreApply(const ChangeSet& change_set,
                                          const std::string& project,
                                          const std::string& undo_root) {
  ApplyOptions options;
  options.project = project;
  options.undo_root = undo_root;
  ASSIGN_OR_RETURN(ApplyResult result, ApplyChangeSet(change_set, options));
  return Convert(result);
}

absl::StatusOr<CoreApplyResult> CoreUndoLast(const std::string& project,
                                             const std::string& undo_root) {
  ASSIGN_OR_RETURN(std::vector<UndoRecordInfo> records,
                   ListUndoRecords(undo_root, project));
  for (const UndoRecordInfo& record : records) {
    if (!record.undone_by.empty()) continue;
    ApplyOptions options;
    options.project = project;
    options.undo_root = undo_root;
    ASSIGN_OR_RETURN(ApplyResult result, UndoApply(record.id, options));
    return Convert(result);
  }
  return absl::NotFoundError("nothing to undo");
}

}  // namespace testing
}  // namespace garuda
