#include "lib/staging/job_commands.h"

#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/jobs/job_file.h"
#include "sandbox/command_policy.h"

namespace garuda {

absl::StatusOr<jobs::JobGuard> OpenStagerJob(
    const std::string& job_file, const std::string& project,
    const std::string& mode, const std::optional<SandboxProblem>& problem) {
  if (mode != "direct") {
    return absl::FailedPreconditionError(absl::StrCat(
        "--job: a job's commands run in direct mode in its own worktree, "
        "not in \"",
        mode, "\" mode"));
  }
  if (problem) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--job: a job never runs a command outside the OS sandbox, and this "
        "machine has none: ",
        problem->reason, ". fix: ", problem->fix));
  }
  ASSIGN_OR_RETURN(jobs::JobGuard job, jobs::LoadJobGuard(job_file, project));
  absl::StatusOr<std::string> git_dir = jobs::RepositoryGitDir(project);
  if (git_dir.ok()) {
    job.git_dir = *std::move(git_dir);
  } else if (!absl::IsNotFound(git_dir.status())) {
    return git_dir.status();
  }
  return job;
}

void ScopeJobCommand(const jobs::JobGuard& job, SandboxPolicy* policy) {
  if (!job.git_dir.empty()) {
    // git in the worktree needs the repository's folder: read-only, so a
    // command can read the history and diff but never commit, move a branch
    // or write a hook (the runner does the job's git work outside); its
    // hooks are not shown at all.
    BindMount* repository = policy->add_binds();
    repository->set_source(job.git_dir);
    repository->set_target(job.git_dir);
    repository->set_writable(false);
    policy->add_denied_paths(JoinPath(job.git_dir, "hooks"));
  }
  if (job.whole_worktree) return;
  ScopeProjectWrites(job.scope, policy);
}

std::string DescribeJobScope(const jobs::JobGuard& job) {
  return jobs::ScopeLine(job.whole_worktree, job.scope);
}

}  // namespace garuda
