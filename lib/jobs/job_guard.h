// What a program that acts for a job takes from its job file, read by that
// program itself (garuda-stager and garuda-applier with --job, the job's
// session): the write scope it enforces and the job's own rules. The agent
// that runs the model never tells a helper what the scope is.
#ifndef GARUDA_LIB_JOBS_JOB_GUARD_H_
#define GARUDA_LIB_JOBS_JOB_GUARD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/permissions/permissions.h"
#include "proto/settings.pb.h"

namespace garuda {
namespace jobs {

// Why every command outside the OS sandbox is refused in a job, before any
// rule (an allow rule included).
inline constexpr char kJobHostRefusal[] =
    "a job never runs a command outside the OS sandbox (outside_sandbox is "
    "denied before any rule)";

struct JobGuard {
  std::string file;  // the job file read
  std::vector<std::string> scope;
  // No writeScope in the file: the whole worktree (its commands' writes are
  // not scoped; git's own files are still checked after the turn).
  bool whole_worktree = false;
  PermissionSettings permissions;  // the job's rules
  uint64_t token_budget = 0;       // 0: the settings' limit
  // The repository's own git folder (RepositoryGitDir), which the stager
  // shows read-only to the job's commands so that git works in the
  // worktree. Set by the stager only (OpenStagerJob); empty elsewhere and
  // when the worktree has no .git file.
  std::string git_dir;
};

// The git folder that the worktree `worktree` belongs to: its .git file
// ("gitdir: PATH") names the worktree's own folder in the repository, whose
// commondir file names the repository's folder. NOT_FOUND when `worktree`
// has no .git file; an error naming the file when one is malformed.
absl::StatusOr<std::string> RepositoryGitDir(const std::string& worktree);

// What the job's commands may write, as the run's first line says it:
// kWholeWorktreeLine, "Commands may write only: src, target." or
// "Commands may write nothing in the worktree."
std::string ScopeLine(bool whole_worktree,
                      const std::vector<std::string>& scope);

// Reads `job_file` (lib/jobs/job_file.h) and checks its scope against the
// worktree `worktree` as it is (CheckScopeInWorktree). Errors start with
// the file's path.
absl::StatusOr<JobGuard> LoadJobGuard(const std::string& job_file,
                                      const std::string& worktree);

// An edit tool's write of `relative` in the job's worktree (`worktree_fd`):
// OK, or PERMISSION_DENIED with why (outside the scope, through a link).
// A job without a scope may write anywhere a path reaches without a link.
absl::Status CheckJobWrite(const JobGuard& guard, int worktree_fd,
                           absl::string_view relative);

// The job's rules added to `permissions`, named by the job file.
absl::Status AddJobRules(const JobGuard& guard, Permissions* permissions);

}  // namespace jobs
}  // namespace garuda

#endif  // GARUDA_LIB_JOBS_JOB_GUARD_H_
