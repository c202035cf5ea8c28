// The supervisor's side of a run, in the caller's process: it waits for the
// sandbox's PID 1 (or a host command), reads captured output, keeps the wall
// time, and stops the run when the caller is told to stop. PID 1's side is
// sandbox/pid1.h.
#ifndef GARUDA_SANDBOX_SUPERVISOR_H_
#define GARUDA_SANDBOX_SUPERVISOR_H_

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/unique_fd.h"
#include "sandbox/run_result.h"

namespace garuda {
namespace sandbox_internal {

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

absl::StatusOr<Pipe> MakePipe();

// While alive, the signals that stop a run (SIGTERM and SIGHUP, and SIGINT
// and SIGQUIT when `interrupts`) are blocked in the calling thread and read
// from a signalfd by Supervise, so that none is lost between the clone and
// the wait and none kills the caller before the sandbox has ended. Made
// before the clone: the child inherits the mask, and PID 1 unblocks it.
// The destructor restores the mask and then raises again the stop signal
// that ended the run (Stopped()), so that the caller meets it as if it had
// not been held back: by default the program ends of it, just after the
// sandbox did.
class StopSignals {
 public:
  // `defer`: the destructor leaves the signal for RaiseDeferredStopSignal.
  StopSignals(bool interrupts, bool defer = false);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  int fd() const { return fd_.get(); }
  // The signal read, 0 when none is pending; it is kept for the raise.
  int Take();
  void SetStopped(int sig) { stopped_ = sig; }
  int Stopped() const { return stopped_; }

 private:
  UniqueFd fd_;
  sigset_t old_mask_;
  int stopped_ = 0;
  bool defer_ = false;
};

struct Supervised {
  int wait_status = 0;
  bool timed_out = false;
  // What PID 1 wrote on the status pipe: the command's wait status (-1:
  // PID 1 found none), once status_read.
  bool status_read = false;
  int command_status = -1;
  // The caller's cancel descriptor fired, and the child was killed for it.
  bool cancelled = false;
};

struct SuperviseOptions {
  int status_fd = -1;  // PID 1's status pipe, or -1 (a host command)
  // Return once the status is in and the output read, without waiting for
  // the child's own exit.
  bool stop_at_status = false;
  uint64_t wall_ms = 0;
  size_t capture_limit = 0;
  // What to do with SIGINT and SIGQUIT read from `signals`: forward them to
  // the child (PID 1 hands them to the command's group), or end the run.
  bool forward_interrupts = false;
  StopSignals* signals = nullptr;
  // The child leads its own process group (a host command): a kill ends
  // the whole group, so that nothing it started keeps the output open.
  bool kill_group = false;
  // RunOptions::cancel_fd and on_output (sandbox/sandbox.h).
  int cancel_fd = -1;
  std::function<void(int stream, absl::string_view data)> on_output;
  // RunOptions::tick_ms and on_tick.
  uint64_t tick_ms = 0;
  std::function<void()> on_tick;
};

// Waits for the child behind `pidfd`, reading captured output as it comes,
// killing the child when the wall time is over, and at once when a stop
// signal comes (recorded in options.signals) or the cancel descriptor fires
// (Supervised::cancelled).
absl::StatusOr<Supervised> Supervise(pid_t pid, UniqueFd pidfd,
                                     UniqueFd stdout_read, UniqueFd stderr_read,
                                     const SuperviseOptions& options,
                                     RunResult* result);

// The captured output of `from` into `to`.
void TakeOutput(RunResult from, RunResult* to);

RunResult FromWaitStatus(int status);

// The run's result from what the supervisor saw: the error pipe's text
// ('S' or 'C', then the reason), the wall time, the OOM kills of the
// command's cgroup, and the command's wait status as PID 1 reported it.
// `pid1_wait_status` is asked for only when PID 1 reported none.
RunResult Outcome(const std::string& error, bool timed_out, uint64_t oom_kills,
                  bool command_reported, int command_status,
                  const std::function<int()>& pid1_wait_status);

}  // namespace sandbox_internal
}  // namespace garuda

#endif  // GARUDA_SANDBOX_SUPERVISOR_H_
