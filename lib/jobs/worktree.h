// The git side of a job (T6): its own worktree and branch, never the
// person's working tree; after the turn, what changed (the post-check's
// input); and the commit of a job that passed.
#ifndef GARUDA_LIB_JOBS_WORKTREE_H_
#define GARUDA_LIB_JOBS_WORKTREE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace garuda {
namespace jobs {

struct JobWorktree {
  std::string path;         // the worktree's folder
  std::string branch;       // "garuda/<job>/<timestamp>"
  std::string base_commit;  // the commit it starts from (hex)
};

// A new branch garuda/<job>/<timestamp> at the checkout's HEAD and a
// worktree of it at `parent`/<job>-<timestamp> (outside the checkout). The
// checkout's working tree and index are not touched. `timestamp` is a
// string of [0-9TZ-], e.g. "20261201T221500Z".
absl::StatusOr<JobWorktree> CreateJobWorktree(const std::string& checkout,
                                              const std::string& job,
                                              const std::string& timestamp,
                                              const std::string& parent);

// Removes a worktree that CreateJobWorktree just made and that the job will
// not use (its scope was refused against it): the folder, git's record of
// it and its branch. Only for a worktree nothing has run in yet.
absl::Status RemoveUnusedJobWorktree(const std::string& checkout,
                                     const JobWorktree& worktree);

struct WorktreeChanges {
  // Every path that differs from the base commit, relative and sorted:
  // modified, added, deleted, staged or not, untracked and ignored files
  // included (a build output too: the post-check decides).
  std::vector<std::string> paths;
  // HEAD is no longer the base commit (a commit, reset or checkout by
  // something in the turn): a change of git itself.
  bool head_moved = false;
};

absl::StatusOr<WorktreeChanges> ListWorktreeChanges(
    const std::string& worktree, const std::string& base_commit);

// The paths of `changes` outside `scope` (lib/jobs/scope.h InScope), and
// "HEAD" when it moved: what makes a job fail with "changes outside the
// approved scope". An empty list means the post-check passes. A job without
// a scope (`whole_worktree`) has only HEAD to keep.
std::vector<std::string> OutsideScope(const WorktreeChanges& changes,
                                      const std::vector<std::string>& scope,
                                      bool whole_worktree);

// Commits what changed in the worktree (what git does not ignore, deletions
// included) on its branch, with `message`. Returns the commit id (hex), or
// "" when nothing was left to commit.
absl::StatusOr<std::string> CommitJobChanges(const std::string& worktree,
                                             const std::string& message);

}  // namespace jobs
}  // namespace garuda

#endif  // GARUDA_LIB_JOBS_WORKTREE_H_
