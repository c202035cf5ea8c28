#include "lib/jobs/process.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/unique_fd.h"

extern char** environ;

namespace garuda {
namespace jobs {
namespace {

volatile sig_atomic_t g_stop_signal = 0;
volatile sig_atomic_t g_child = 0;

void OnStopSignal(int signal) {
  g_stop_signal = signal;
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), signal);
}

}  // namespace

void ForwardStopSignals() {
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  ::sigemptyset(&action.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    ::sigaction(signal, &action, nullptr);
  }
}

int StopSignal() { return g_stop_signal; }

absl::StatusOr<ProgramRun> RunProgram(const std::vector<std::string>& argv,
                                      int out_fd, int err_fd) {
  if (argv.empty()) return absl::InvalidArgumentError("no program to run");
  int pipe_fds[2] = {-1, -1};
  if (out_fd < 0 && ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return LastErrnoStatus("pipe2");
  }
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  // The exec's failure comes back on a close-on-exec pipe: nothing read
  // means the exec happened.
  int exec_fds[2];
  if (::pipe2(exec_fds, O_CLOEXEC) != 0) return LastErrnoStatus("pipe2");
  UniqueFd exec_read(exec_fds[0]), exec_write(exec_fds[1]);
  std::vector<char*> args;
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  const int child_out = out_fd < 0 ? write_end.get() : out_fd;
  pid_t pid = ::fork();
  if (pid < 0) return LastErrnoStatus("fork");
  if (pid == 0) {
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) ::signal(signal, SIG_DFL);
    int null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(child_out, 1) < 0 ||
        ::dup2(err_fd, 2) < 0) {
      int error = errno;
      (void)!::write(exec_write.get(), &error, sizeof error);
      ::_exit(127);
    }
    ::signal(SIGPIPE, SIG_DFL);
    ::execve(args[0], args.data(), environ);
    int error = errno;
    (void)!::write(exec_write.get(), &error, sizeof error);
    ::_exit(127);
  }
  g_child = pid;
  exec_write.Reset();
  write_end.Reset();
  ProgramRun run;
  int error = 0;
  ssize_t got;
  do {
    got = ::read(exec_read.get(), &error, sizeof error);
  } while (got < 0 && errno == EINTR);
  if (out_fd < 0) {
    char buffer[16384];
    for (;;) {
      ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      run.out.append(buffer, static_cast<size_t>(n));
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      g_child = 0;
      return LastErrnoStatus("waitpid");
    }
  }
  g_child = 0;
  if (got == static_cast<ssize_t>(sizeof error)) {
    return ErrnoStatus(error, absl::StrCat("start ", argv[0]));
  }
  run.exit_code = WIFEXITED(status)     ? WEXITSTATUS(status)
                  : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                        : -1;
  return run;
}

}  // namespace jobs
}  // namespace garuda
