// `garuda-agent jobs` (T6): the jobs of a checkout with their scope and
// last result, and `jobs timer NAME --on-calendar SPEC [--print]`.
#ifndef GARUDA_LIB_JOBS_JOBS_COMMAND_H_
#define GARUDA_LIB_JOBS_JOBS_COMMAND_H_

#include <string>

namespace garuda {
namespace jobs {

struct JobsCommandOptions {
  std::string checkout;       // --project; empty: the current folder
  std::string agent_program;  // for the timer's ExecStart
  // timer: the job, the calendar, and whether to print the units instead
  // of writing them to ~/.config/systemd/user ($XDG_CONFIG_HOME).
  std::string job;
  std::string on_calendar;
  bool print = false;
  int out_fd = 1, err_fd = 2;
};

// One line per .garuda/jobs/*.json: name, scope (or the whole worktree),
// last result (succeeded/failed, branch, commit or why). A job file that
// does not read says why on its line. Exit 0, or 2 without a checkout.
int ListJobsCommand(const JobsCommandOptions& options);

// Exit 0 written (or printed), 2 on a bad name, job or calendar.
int JobTimerCommand(const JobsCommandOptions& options);

}  // namespace jobs
}  // namespace garuda

#endif  // GARUDA_LIB_JOBS_JOBS_COMMAND_H_
