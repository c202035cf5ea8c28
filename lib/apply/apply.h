// Applying a change list to the project: the only code that writes it.
//
// Checks before anything is written (checks.h): every path is a plain
// relative path inside the root (no "..", not absolute, no .git component
// at any depth), no special file, no setuid or setgid bit, no link that
// leads out of the root once applied, no write through a symlinked folder
// (every path is opened beneath the root with openat2 RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS); then the conflict check: every path must still be
// what it was when the list was made. Then, all or nothing: the pre-images
// go to the undo store, the plan to a recovery journal (journal.h), new
// contents to temporary files beside their targets, synced, then renames.
// After each rename the applier confirms that what it swapped out is what
// it checked (a save in between is a conflict, and everything is put back);
// a failure part way, or SIGTERM, SIGINT or SIGHUP, puts back what was
// already renamed, by the folder descriptors it holds.
#ifndef GARUDA_LIB_APPLY_APPLY_H_
#define GARUDA_LIB_APPLY_APPLY_H_

#include <functional>
#include <optional>
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
  // Test seam: called before step `step` (1 is the first change to the
  // project, after the check, the undo record, the journal and the
  // temporaries; one past the last: everything done, synced and marked
  // committed, the temporaries not yet removed); an error fails the apply
  // there.
  std::function<absl::Status(int step)> before_step;
  // Test seam for the negative control of the re-check: false skips the
  // confirmation that what a rename swapped out is what was checked.
  bool verify_replaced = true;
  // A job's write scope (garuda-applier --job): a list with any path
  // outside it is refused whole (scope_refusal.h). nullopt: no scope.
  std::optional<std::vector<std::string>> write_scope;
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
  // Interrupted applies of this project finished or reversed first, one
  // line each (RecoveryResult::Line).
  std::vector<std::string> recovered;
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

struct RecoveryResult {
  std::string id;         // the interrupted apply
  bool finished = false;  // true: all new; false: reversed, all old
  int paths = 0;
  // "apply 20261201-... was interrupted; finished: the project holds its
  // 3 changed paths" or "...; reversed: the project is as before it".
  std::string Line() const;
};

// Finishes or reverses every interrupted apply of `project` (its journal
// left in the undo store by a kill, a crash or a power loss): one whose
// steps were all done and synced is finished (its temporaries removed),
// any other is reversed step by step, so the project is all old or all
// new. Waits for a running apply in the project first.
absl::StatusOr<std::vector<RecoveryResult>> RecoverInterruptedApplies(
    const std::string& undo_root, const std::string& project);

// The ids of the applies of `project` whose journal is still there: running
// now, or interrupted and waiting for recovery. Empty when none (or the
// undo store cannot be read).
std::vector<std::string> PendingApplies(const std::string& undo_root,
                                        const std::string& project);

// Restores the project as it was before apply `id`, with the same checks as
// an apply (a path changed since is a conflict, nothing is overwritten).
// The undo is itself recorded, so it can be undone.
absl::StatusOr<ApplyResult> UndoApply(const std::string& id,
                                      const ApplyOptions& options);

}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_APPLY_H_
