// The programs a job's run starts and waits for (the job's session, the
// test command through garuda-stager): fork and exec with standard input
// /dev/null, standard output captured or sent on, standard error shared.
#ifndef GARUDA_LIB_JOBS_PROCESS_H_
#define GARUDA_LIB_JOBS_PROCESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace garuda {
namespace jobs {

struct ProgramRun {
  int exit_code = -1;  // 128 + the signal when killed
  std::string out;     // standard output, when captured
};

// Runs `argv` (argv[0] a path) to its end. `out_fd` < 0: standard output is
// captured into ProgramRun::out; else it goes to `out_fd`. Standard error
// goes to `err_fd`. An exec failure is an error naming the program.
absl::StatusOr<ProgramRun> RunProgram(const std::vector<std::string>& argv,
                                      int out_fd, int err_fd);

// From now on SIGINT, SIGTERM and SIGHUP do not end this process: each is
// passed on to the program RunProgram is running (which ends its own way:
// the session cancels its turn) and remembered, so that the caller stops
// before its next step.
void ForwardStopSignals();
// The last stop signal that came; 0 when none.
int StopSignal();

}  // namespace jobs
}  // namespace garuda

#endif  // GARUDA_LIB_JOBS_PROCESS_H_
