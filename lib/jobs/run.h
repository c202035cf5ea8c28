// `garuda-agent run JOB [--json]` (T6): one unattended turn in a worktree
// of its own, bounded by the job's write scope, then the post-check, the
// test command and the commit.
//
// Two processes, so that what writes the person's repository never reads
// the model's output: this runner (it makes the worktree and the branch,
// runs the post-check and the test command, commits) starts the job's
// session as a second garuda-agent (`--job FILE -p PROMPT --output-format
// json` on the worktree), which runs the turn locked down like every
// session; its helpers read the job file themselves (garuda-stager and
// garuda-applier --job) and hold the scope. The runner reads back only the
// session's one JSON report, parsed strictly into its proto.
#ifndef GARUDA_LIB_JOBS_RUN_H_
#define GARUDA_LIB_JOBS_RUN_H_

#include <string>

#include "absl/status/statusor.h"
#include "lib/jobs/job_file.h"
#include "lib/jobs/worktree.h"
#include "lib/provider/config.h"
#include "proto/job.pb.h"

namespace garuda {
namespace jobs {

struct RunJobOptions {
  std::string checkout;  // --project; empty: the current folder
  std::string job;       // a name of .garuda/jobs/ or a path
  bool json = false;     // the report as one JSON object on out_fd
  provider::ModelOverrides overrides;  // --provider/--model/--base-url
  // Where garuda-auditor and garuda-stager are (garuda-agent's
  // --helpers-dir), and garuda-agent itself for the session.
  std::string helpers_dir;
  std::string agent_program;
  std::string accept_weaker_lockdown;
  int out_fd = 1, err_fd = 2;
};

// The exit status: 0 succeeded, 1 failed (the report says why), 2 a bad job
// file or usage.
int RunJob(const RunJobOptions& options);

// ~/.garuda/jobs/<ProjectKey(checkout)>: the job worktrees of a checkout
// and the last report of each job (last/<job>.json).
std::string JobsFolder(const std::string& home, const std::string& checkout);
std::string LastReportFile(const std::string& home, const std::string& checkout,
                           const std::string& job);

// The post-check: what changed in `worktree` against `base_commit`, and
// what of it lies outside the scope (worktree.h OutsideScope).
struct PostCheck {
  WorktreeChanges changes;
  std::vector<std::string> outside;
};
absl::StatusOr<PostCheck> CheckWorktree(const std::string& worktree,
                                        const std::string& base_commit,
                                        const Job& job);

// The report as a person reads it (without --json).
std::string ReportText(const JobReport& report);

}  // namespace jobs
}  // namespace garuda

#endif  // GARUDA_LIB_JOBS_RUN_H_
