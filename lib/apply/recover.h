// Recovery of an apply cut short by a kill, a crash or a power loss, from
// its journal (journal.h) and its undo record (undo_store.h).
#ifndef GARUDA_LIB_APPLY_RECOVER_H_
#define GARUDA_LIB_APPLY_RECOVER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/apply/apply.h"

namespace garuda {
namespace apply_internal {

// The ids of the records in `undo_folder` that still hold a journal.
std::vector<std::string> InterruptedApplies(const std::string& undo_folder);

// Finishes or reverses each of them; the caller holds LockUndoFolder.
// An apply whose journal says "committed" is finished (its temporaries go);
// any other is reversed: each planned step, newest first, is looked up in
// the project and put back if it happened. A step that cannot be put back
// keeps the journal and is an error naming the path.
absl::StatusOr<std::vector<RecoveryResult>> RecoverLocked(
    const std::string& undo_folder, int root_fd, const std::string& project);

}  // namespace apply_internal
}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_RECOVER_H_
