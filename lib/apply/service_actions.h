// The two actions of `garuda-applier serve`, apart from its channel: the
// generated messages of proto/applier_service.proto (ApplyChangeSet,
// UndoApply, ApplyOutcome) have the names of lib/apply/apply.h's functions
// and types, so a file sees one or the other, never both.
#ifndef GARUDA_LIB_APPLY_SERVICE_ACTIONS_H_
#define GARUDA_LIB_APPLY_SERVICE_ACTIONS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/changeset/changeset.h"

namespace garuda {

struct ServedOutcome {
  // The numbers of ApplyOutcome.Kind in proto/applier_service.proto.
  enum class Kind { kApplied = 1, kNoChanges = 2, kConflict = 3, kRefused = 4 };
  Kind kind = Kind::kApplied;
  std::string line;  // for the model, as `garuda-applier apply` prints it
  std::vector<std::string> conflicts;  // kConflict: visible paths
  std::string undo_id;  // an apply: its record; an undo: the apply undone
  int files = 0;
};

// Checks `session_id` (letters, digits, '.', '_', '-'; it goes into the
// undo record).
absl::Status CheckServedSessionId(const std::string& session_id);

// Reads the whole list from `fd`, from offset 0: a sealed memfd
// (ipc::CheckSealed; anything else is refused, since a list that can still
// change after the question is not the list the person saw), checked
// against `project` (a real path). `name` starts errors.
absl::StatusOr<ChangeSet> ReadServedList(int fd, const std::string& name,
                                         const std::string& project);

// Applies `change_set` (read by ReadServedList, and agreed to) to
// `project`, recording its undo in `undo_root`, tagged with `session_id`.
// `reason` replaces the list's command in the record when not empty.
absl::StatusOr<ServedOutcome> ApplyServedList(ChangeSet change_set,
                                              const std::string& project,
                                              const std::string& undo_root,
                                              const std::string& reason,
                                              const std::string& session_id);

// Undoes apply `undo_id`, or when it is empty the newest apply of
// `session_id` that is not undone yet. The undo's own record has no
// session, so a second call goes one apply further back.
absl::StatusOr<ServedOutcome> UndoServedApply(const std::string& project,
                                              const std::string& undo_root,
                                              const std::string& undo_id,
                                              const std::string& session_id);

}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_SERVICE_ACTIONS_H_
