// The undo store: <undo_root>/<project>-<hash>/<id>/ holds, for each apply,
// the inverse change list with the pre-image of every path it replaced or
// removed ("changeset"), a "summary" for `undo --list`, "undone" once it was
// undone, and while the apply runs its recovery journal (journal.h).
#ifndef GARUDA_LIB_APPLY_UNDO_STORE_H_
#define GARUDA_LIB_APPLY_UNDO_STORE_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "lib/apply/apply.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/changeset.h"

namespace garuda {
namespace apply_internal {

// Sortable by time: 20261129-221503-1a2b.
std::string NewUndoId();

// What the project holds at an entry's path once the entry is applied.
Fingerprint NewFingerprint(const ChangeEntry& entry);

// Writes the record of apply `id` (the inverse of `change_set`, with the
// pre-images in `base_contents` and the old link targets read beneath
// `root_fd`), synced before the project is touched. Returns its folder.
absl::StatusOr<std::string> WriteUndoRecord(
    const ChangeSet& change_set,
    const std::map<std::string, std::string>& base_contents, int root_fd,
    const ApplyOptions& options, const std::string& id);

// Removes a record (an apply that did not happen).
void RemoveUndoRecord(const std::string& record);

// flock(LOCK_EX) on <folder>/lock, made if missing: one applier at a time
// in a project, so that recovery never takes a running apply for an
// interrupted one. Waits for the holder.
absl::StatusOr<UniqueFd> LockUndoFolder(const std::string& folder);

}  // namespace apply_internal
}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_UNDO_STORE_H_
