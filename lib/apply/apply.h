// Applying a change list to the project: the only code that writes it.
//
// Checks before anything is written: every path is a plain relative path
// inside the root (no "..", not absolute, not in .git), no special file, no
// setuid bit, no link that points out of the root, no write through a
// symlinked folder (every path is opened beneath the root with openat2
// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS); then the conflict check: every
// path must still be what it was when the list was made. Then, all or
// nothing: the pre-images go to the undo store, new contents to temporary
// files beside their targets, synced, then renames; a failure part way
// puts back what was already renamed.
#ifndef GARUDA_LIB_APPLY_APPLY_H_
#define GARUDA_LIB_APPLY_APPLY_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/changeset/changeset.h"

namespace garuda {

struct ApplyOptions {
  std::string project;    // the project root
  std::string undo_root;  // ~/.garuda/undo; empty: no undo record
  bool dry_run = false;   // check only
  // The agent's session, kept in the undo record (garuda-applier serve
  // undoes "the session's last apply" with it); empty: none.
  std::string session_id;
  // Test seam: called after each step that changed the project (a rename, a
  // new folder, a mode); an error there fails the apply at that point.
  std::function<absl::Status(int step)> after_step;
};

enum class ApplyOutcome {
  kApplied,   // or, with dry_run, would apply
  kConflict,  // the project changed since the list was made
  kRefused,   // the list asks for something never allowed
};

struct ApplyResult {
  ApplyOutcome outcome = ApplyOutcome::kApplied;
  // One line per problem: the visible path and what is wrong.
  std::vector<std::string> problems;
  // kConflict: the visible paths that changed in the project.
  std::vector<std::string> conflicts;
  std::string undo_id;  // the record of this apply, when one was made
  int paths = 0;        // entries applied
};

// An error status means nothing was changed, or what was changed was put
// back (the message says so when putting back failed too).
absl::StatusOr<ApplyResult> ApplyChangeSet(const ChangeSet& change_set,
                                           const ApplyOptions& options);

// The folder of a project's undo records: <undo_root>/<hash of its path>.
absl::StatusOr<std::string> UndoFolder(const std::string& undo_root,
                                       const std::string& project);

struct UndoRecordInfo {
  std::string id;         // sortable by time: 20261129-221503-1a2b
  std::string undone_by;  // the id of the undo that reverted it, if any
  std::vector<std::string> paths;  // visible paths
  std::string command;
  std::string session_id;  // ApplyOptions::session_id of the apply
};

// Newest first.
absl::StatusOr<std::vector<UndoRecordInfo>> ListUndoRecords(
    const std::string& undo_root, const std::string& project);

// Restores the project as it was before apply `id`, with the same checks as
// an apply (a path changed since is a conflict, nothing is overwritten).
// The undo is itself recorded, so it can be undone.
absl::StatusOr<ApplyResult> UndoApply(const std::string& id,
                                      const ApplyOptions& options);

}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_APPLY_H_
