#include "sandbox/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace sandbox_internal {
namespace {

int64_t NowMs() {
  struct timespec now;
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

struct Captured {
  std::string* data;
  bool* truncated;
};

// Reads what is there; false at end of file.
bool ReadSome(int fd, const Captured& into, size_t limit, int stream,
              const SuperviseOptions& options) {
  char buffer[65536];
  ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  if (options.on_output) {
    options.on_output(stream,
                      absl::string_view(buffer, static_cast<size_t>(n)));
  }
  size_t room = limit > into.data->size() ? limit - into.data->size() : 0;
  into.data->append(buffer, std::min<size_t>(room, n));
  if (static_cast<size_t>(n) > room) *into.truncated = true;
  return true;
}

bool SendSignal(int pidfd, int sig) {
  return ::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0) == 0;
}

}  // namespace

absl::StatusOr<Pipe> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return LastErrnoStatus("pipe2");
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

namespace {
// The stop signal a deferred run kept for RaiseDeferredStopSignal.
std::atomic<int> deferred_stop{0};
}  // namespace

StopSignals::StopSignals(bool interrupts, bool defer) : defer_(defer) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGHUP);
  if (interrupts) {
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGQUIT);
  }
  ::pthread_sigmask(SIG_BLOCK, &stop, &old_mask_);
  // A signal the caller already blocked stays the caller's business.
  for (int sig : {SIGTERM, SIGHUP, SIGINT, SIGQUIT}) {
    if (sigismember(&old_mask_, sig)) sigdelset(&stop, sig);
  }
  fd_.Reset(::signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK));
}

StopSignals::~StopSignals() {
  // Taken off the queue by the signalfd: raised again once the mask is the
  // caller's, so that its disposition (by default: end the program) runs.
  if (stopped_ != 0 && defer_) {
    deferred_stop = stopped_;
  } else if (stopped_ != 0) {
    ::raise(stopped_);  // pending while still blocked, delivered just below
  }
  ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

int StopSignals::Take() {
  if (!fd_) return 0;
  struct signalfd_siginfo info;
  ssize_t got = ::read(fd_.get(), &info, sizeof info);
  if (got != sizeof info) return 0;
  return static_cast<int>(info.ssi_signo);
}

}  // namespace sandbox_internal

void RaiseDeferredStopSignal() {
  int sig = sandbox_internal::deferred_stop.exchange(0);
  if (sig != 0) ::raise(sig);
}

namespace sandbox_internal {

absl::StatusOr<Supervised> Supervise(pid_t pid, UniqueFd pidfd,
                                     UniqueFd stdout_read, UniqueFd stderr_read,
                                     const SuperviseOptions& options,
                                     RunResult* result) {
  Supervised supervised;
  int status_fd = options.status_fd;
  int signal_fd = options.signals != nullptr ? options.signals->fd() : -1;
  int64_t deadline =
      options.wall_ms ? NowMs() + static_cast<int64_t>(options.wall_ms) : -1;
  bool exited = false;
  bool killed = false;
  auto done_waiting = [&] {
    return exited || (options.stop_at_status && supervised.status_read &&
                      supervised.command_status != -1);
  };
  auto kill_child = [&](const char* why) -> absl::Status {
    if (killed) return absl::OkStatus();
    killed = true;
    // Not reaped yet (killed comes before the wait), so the group id is
    // still the child's own.
    if (options.kill_group) ::kill(-pid, SIGKILL);
    if (!SendSignal(pidfd.get(), SIGKILL) && errno != ESRCH) {
      return LastErrnoStatus(why);
    }
    return absl::OkStatus();
  };
  while (!done_waiting() || stdout_read || stderr_read) {
    struct pollfd fds[6];
    int count = 0;
    int pid_index = -1, out_index = -1, err_index = -1, status_index = -1;
    int signal_index = -1, cancel_index = -1;
    if (!done_waiting()) {
      pid_index = count;
      fds[count++] = {pidfd.get(), POLLIN, 0};
    }
    if (stdout_read) {
      out_index = count;
      fds[count++] = {stdout_read.get(), POLLIN, 0};
    }
    if (stderr_read) {
      err_index = count;
      fds[count++] = {stderr_read.get(), POLLIN, 0};
    }
    if (status_fd >= 0 && !supervised.status_read && !exited) {
      status_index = count;
      fds[count++] = {status_fd, POLLIN, 0};
    }
    if (signal_fd >= 0 && !done_waiting()) {
      signal_index = count;
      fds[count++] = {signal_fd, POLLIN, 0};
    }
    if (options.cancel_fd >= 0 && !supervised.cancelled && !done_waiting()) {
      cancel_index = count;
      fds[count++] = {options.cancel_fd, POLLIN, 0};
    }
    int timeout = -1;
    if (deadline >= 0 && !done_waiting() && !supervised.timed_out) {
      timeout = static_cast<int>(std::max<int64_t>(0, deadline - NowMs()));
    }
    const bool ticking =
        options.tick_ms > 0 && options.on_tick && !done_waiting();
    if (ticking) {
      const int tick = static_cast<int>(std::min<uint64_t>(options.tick_ms, 60000));
      timeout = timeout < 0 ? tick : std::min(timeout, tick);
    }
    int ready = ::poll(fds, count, timeout);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return LastErrnoStatus("poll");
    }
    if (ready == 0 && ticking &&
        (deadline < 0 || supervised.timed_out || NowMs() < deadline)) {
      options.on_tick();
      continue;
    }
    if (ready == 0) {
      supervised.timed_out = true;
      if (absl::Status killed_status =
              kill_child("kill the sandbox after its wall time");
          !killed_status.ok()) {
        return killed_status;
      }
      continue;
    }
    if (signal_index >= 0 && fds[signal_index].revents) {
      int sig = options.signals->Take();
      if ((sig == SIGINT || sig == SIGQUIT) && options.forward_interrupts) {
        // PID 1 hands it to the command's group (sandbox/pid1.h); a host
        // command in the caller's group had it from the terminal already.
        if (status_fd >= 0) SendSignal(pidfd.get(), sig);
      } else if (sig != 0) {
        // The caller is told to stop: the command and everything it
        // started end now (PID 1's end ends its namespace), whatever it
        // does with signals; the caller meets the signal after the run.
        options.signals->SetStopped(sig);
        if (absl::Status killed_status = kill_child("kill the sandbox");
            !killed_status.ok()) {
          return killed_status;
        }
      }
    }
    if (cancel_index >= 0 && fds[cancel_index].revents) {
      // The caller's side asked to stop (or is gone): as for a stop signal,
      // the command and everything it started end now; the caller goes on.
      supervised.cancelled = true;
      if (absl::Status killed_status = kill_child("kill the stopped command");
          !killed_status.ok()) {
        return killed_status;
      }
    }
    if (out_index >= 0 && fds[out_index].revents &&
        !ReadSome(stdout_read.get(),
                  {&result->stdout_data, &result->stdout_truncated},
                  options.capture_limit, 1, options)) {
      stdout_read.Reset();
    }
    if (err_index >= 0 && fds[err_index].revents &&
        !ReadSome(stderr_read.get(),
                  {&result->stderr_data, &result->stderr_truncated},
                  options.capture_limit, 2, options)) {
      stderr_read.Reset();
    }
    if (status_index >= 0 && fds[status_index].revents) {
      // PID 1 writes the 4 bytes at once, and only just before it exits;
      // end of file (PID 1 died first) leaves the status at -1.
      ssize_t got = ::read(status_fd, &supervised.command_status,
                           sizeof supervised.command_status);
      if (got < 0 && errno == EINTR) continue;
      if (got != sizeof supervised.command_status) {
        supervised.command_status = -1;
      }
      supervised.status_read = true;
    }
    if (pid_index >= 0 && fds[pid_index].revents) {
      if (::waitpid(pid, &supervised.wait_status, 0) < 0) {
        return LastErrnoStatus("waitpid");
      }
      exited = true;
    }
  }
  return supervised;
}

void TakeOutput(RunResult from, RunResult* to) {
  to->stdout_data = std::move(from.stdout_data);
  to->stderr_data = std::move(from.stderr_data);
  to->stdout_truncated = from.stdout_truncated;
  to->stderr_truncated = from.stderr_truncated;
}

RunResult FromWaitStatus(int status) {
  if (WIFEXITED(status)) return RunResult::Exited(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return RunResult::Signaled(WTERMSIG(status));
  return RunResult::FailedToStart(absl::StrCat("unknown wait status ", status));
}

RunResult Outcome(const std::string& error, bool timed_out, uint64_t oom_kills,
                  bool command_reported, int command_status,
                  const std::function<int()>& pid1_wait_status) {
  RunResult outcome;
  if (!error.empty()) {
    outcome = RunResult::FailedToStart(error.substr(1));
    outcome.sandbox_failed = error[0] == 'S';
  } else if (timed_out) {
    outcome.kind = RunResult::Kind::kTimedOut;
  } else if (oom_kills > 0 &&
             (!command_reported || (WIFSIGNALED(command_status) &&
                                    WTERMSIG(command_status) == SIGKILL))) {
    // The kernel counted an OOM kill in the command's own memory cgroup,
    // and the command (or PID 1 under it) died of SIGKILL: that kill.
    outcome.kind = RunResult::Kind::kOutOfMemory;
    outcome.signal = SIGKILL;
  } else if (command_reported) {
    outcome = FromWaitStatus(command_status);
  } else {
    outcome = RunResult::FailedToStart(
        absl::StrCat("the sandbox ended before the command: ",
                     FromWaitStatus(pid1_wait_status()).Describe()));
  }
  return outcome;
}

}  // namespace sandbox_internal
}  // namespace garuda
