// A job's commands (T6), as garuda-stager enforces them itself when it is
// started with --job FILE: it reads the job file, runs every command in the
// OS sandbox with the worktree read-only but for the job's write scope, and
// runs nothing on the host. The agent's word on the scope is never taken.
#ifndef GARUDA_LIB_STAGING_JOB_COMMANDS_H_
#define GARUDA_LIB_STAGING_JOB_COMMANDS_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/jobs/job_guard.h"
#include "lib/staging/stager_settings.h"
#include "proto/sandbox_policy.pb.h"

namespace garuda {

// Reads the job file and checks that the job may start here: direct mode
// (the worktree is the staging; the post-check and the commit are the
// question) and a working OS sandbox (`problem` is the probe's first
// missing part). FAILED_PRECONDITION names what is missing and the fix.
absl::StatusOr<jobs::JobGuard> OpenStagerJob(
    const std::string& job_file, const std::string& project,
    const std::string& mode, const std::optional<SandboxProblem>& problem);

// The job's command policy: the scope bound writable over the read-only
// worktree (sandbox/command_policy.h ScopeProjectWrites); a job without a
// scope leaves the worktree writable.
void ScopeJobCommand(const jobs::JobGuard& job, SandboxPolicy* policy);

// The line the stager says for a job: its scope, or that commands may write
// anywhere in the worktree.
std::string DescribeJobScope(const jobs::JobGuard& job);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_JOB_COMMANDS_H_
