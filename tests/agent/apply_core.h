// lib/apply in-process, for the test applier (fakes.h). Kept apart from the
// proto of the applier's channel: lib/apply's enum ApplyOutcome and the
// channel's message ApplyOutcome share a name.
#ifndef GARUDA_TESTS_AGENT_APPLY_CORE_H_
#define GARUDA_TESTS_AGENT_APPLY_CORE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/changeset/changeset.h"

namespace garuda {
namespace testing {

struct CoreApplyResult {
  enum Kind { kApplied, kConflict, kRefused } kind = kApplied;
  std::vector<std::string> problems;
  std::string undo_id;
  int paths = 0;
};

absl::StatusOr<CoreApplyResult> CoreApply(const ChangeSet& change_set,
                                          const std::string& project,
                                          const std::string& undo_root);
// The newest apply of the project that was not undone.
absl::StatusOr<CoreApplyResult> CoreUndoLast(const std::string& project,
                                             const std::string& undo_root);

}  // namespace testing
}  // namespace garuda

#endif  // GARUDA_TESTS_AGENT_APPLY_CORE_H_
