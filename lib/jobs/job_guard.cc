#include "lib/jobs/job_guard.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/beneath.h"
#include "lib/jobs/job_file.h"
#include "lib/jobs/scope.h"

namespace garuda {
namespace jobs {

std::string ScopeLine(bool whole_worktree,
                      const std::vector<std::string>& scope) {
  if (whole_worktree) return kWholeWorktreeLine;
  if (scope.empty()) return "Commands may write nothing in the worktree.";
  return absl::StrCat("Commands may write only: ", absl::StrJoin(scope, ", "),
                      ".");
}

absl::StatusOr<JobGuard> LoadJobGuard(const std::string& job_file,
                                      const std::string& worktree) {
  ASSIGN_OR_RETURN(Job job, ReadJobFile(job_file));
  JobGuard guard;
  guard.file = job_file;
  guard.scope.assign(job.file.write_scope().begin(),
                     job.file.write_scope().end());
  guard.whole_worktree = job.whole_worktree;
  guard.permissions = job.file.permissions();
  guard.token_budget = job.file.token_budget();
  ASSIGN_OR_RETURN(UniqueFd root, OpenRoot(worktree));
  absl::Status in_worktree = CheckScopeInWorktree(root.get(), guard.scope);
  if (!in_worktree.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(job_file, ": ", in_worktree.message()));
  }
  return guard;
}

absl::Status CheckJobWrite(const JobGuard& guard, int worktree_fd,
                           absl::string_view relative) {
  if (guard.whole_worktree) {
    // The whole worktree is the scope: only the links are checked.
    return CheckWriteInScope(worktree_fd, {std::string(relative)}, relative);
  }
  return CheckWriteInScope(worktree_fd, guard.scope, relative);
}

absl::Status AddJobRules(const JobGuard& guard, Permissions* permissions) {
  return permissions->AddRules(guard.permissions, guard.file);
}

}  // namespace jobs
}  // namespace garuda
