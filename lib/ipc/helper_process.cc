#include "lib/ipc/helper_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace garuda {
namespace ipc {
namespace {

// Only async-signal-safe calls from here to exec: the parent may have
// threads, and the child of fork() has just one copy of their locks.
[[noreturn]] void ExecChild(int socket_fd, int channel_fd,
                            const std::vector<int>& inherit_fds, int error_pipe,
                            int max_fd, bool new_process_group,
                            char* const argv[], int go_read, int go_write) {
  // A clean signal state: default handlers and nothing blocked, whatever
  // the parent had (a helper must be killable and get SIGPIPE as usual).
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig == SIGKILL || sig == SIGSTOP) continue;
    ::signal(sig, SIG_DFL);
  }
  sigset_t empty;
  sigemptyset(&empty);
  ::sigprocmask(SIG_SETMASK, &empty, nullptr);

  int error = 0;
  if (new_process_group && ::setpgid(0, 0) != 0) error = errno;
  if (error == 0 && socket_fd != channel_fd &&
      ::dup2(socket_fd, channel_fd) < 0) {
    error = errno;
  }
  // Every descriptor from 3 up closes on exec, whoever opened it without
  // O_CLOEXEC; then the channel and the inherited ones are let through.
  if (error == 0 &&
      ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = 3; fd <= max_fd; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  if (error == 0 && ::fcntl(channel_fd, F_SETFD, 0) != 0) error = errno;
  for (int fd : inherit_fds) {
    if (error == 0 && ::fcntl(fd, F_SETFD, 0) != 0) error = errno;
  }
  // A deferred helper (PendingHelper) waits here, before exec, until its
  // parent says go; the parent's end closed without a word: it never runs.
  if (go_read >= 0) {
    // What the wait keeps open: nothing of this process but the channel,
    // the two pipes and the inherited descriptors (no copy of the parent's
    // other channels or files while it waits).
    int keep[64];
    int kept = 0;
    keep[kept++] = channel_fd;
    keep[kept++] = error_pipe;
    keep[kept++] = go_read;
    for (int fd : inherit_fds) {
      if (kept < 64) keep[kept++] = fd;
    }
    std::sort(keep, keep + kept);
    unsigned int from = 3;
    for (int i = 0; i < kept; ++i) {
      if (keep[i] < 3) continue;
      if (static_cast<unsigned int>(keep[i]) > from) {
        ::syscall(SYS_close_range, from, keep[i] - 1U, 0U);
      }
      from = static_cast<unsigned int>(keep[i]) + 1;
    }
    ::syscall(SYS_close_range, from, ~0U, 0U);
    (void)go_write;  // closed by the close_range above
    char go = 0;
    ssize_t got;
    do {
      got = ::read(go_read, &go, 1);
    } while (got < 0 && errno == EINTR);
    if (got != 1) ::_exit(0);
    ::close(go_read);
  }
  if (error == 0) {
    ::execv(argv[0], argv);
    error = errno;
  }
  // The parent reads this errno from the pipe (closed on a good exec).
  ssize_t ignored = ::write(error_pipe, &error, sizeof(error));
  (void)ignored;
  ::_exit(127);
}

// Reaps `pid` (blocking), retrying on EINTR.
int ReapBlocking(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

std::string DescribeWaitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) {
    return absl::StrCat("exited with status ", WEXITSTATUS(wait_status));
  }
  if (WIFSIGNALED(wait_status)) {
    int sig = WTERMSIG(wait_status);
    const char* name = ::sigabbrev_np(sig);
    return absl::StrCat("was killed by signal ", sig,
                        name != nullptr ? absl::StrCat(" (SIG", name, ")") : "",
                        WCOREDUMP(wait_status) ? ", core dumped" : "");
  }
  return absl::StrCat("ended with wait status ", wait_status);
}

absl::StatusOr<std::unique_ptr<HelperProcess>> HelperProcess::Spawn(
    const HelperOptions& options) {
  ASSIGN_OR_RETURN(ForkedHelper forked,
                   ForkHelper(options, /*deferred=*/false));
  return FinishSpawn(std::move(forked));
}

absl::StatusOr<HelperProcess::ForkedHelper> HelperProcess::ForkHelper(
    const HelperOptions& options, bool deferred) {
  if (options.argv.empty() || options.argv[0].empty()) {
    return absl::InvalidArgumentError("helper: empty argv (no program path)");
  }
  const std::string& path = options.argv[0];
  if (options.child_channel_fd < 3) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": child_channel_fd ", options.child_channel_fd,
        " would replace standard input, output or error; use 3 or more"));
  }
  int highest = options.child_channel_fd;
  for (int fd : options.inherit_fds) {
    if (fd == options.child_channel_fd) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": inherited descriptor ", fd,
                       " is the number the channel gets in the child"));
    }
    if (fd < 0 || ::fcntl(fd, F_GETFD) < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": inherited descriptor ", fd, " is not open"));
    }
    highest = std::max(highest, fd);
  }
  ChannelOptions channel_options = options.channel;
  if (channel_options.peer_name == ChannelOptions().peer_name) {
    channel_options.peer_name = Basename(path);
  }

  ASSIGN_OR_RETURN(auto sockets, MakeSocketPair());
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return LastErrnoStatus("pipe2");
  UniqueFd error_read(pipe_fds[0]);
  UniqueFd error_write(pipe_fds[1]);
  // Above every number the child sets up, so dup2 cannot replace it.
  int moved = ::fcntl(error_write.get(), F_DUPFD_CLOEXEC, highest + 1);
  if (moved < 0) return LastErrnoStatus("fcntl(F_DUPFD_CLOEXEC)");
  error_write.Reset(moved);

  struct rlimit limit;
  int max_fd = 65535;
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 &&
      limit.rlim_cur != RLIM_INFINITY) {
    max_fd = static_cast<int>(std::min<rlim_t>(limit.rlim_cur, INT_MAX) - 1);
  }
  std::vector<char*> argv;
  for (const std::string& arg : options.argv) {
    argv.push_back(const_cast<char*>(arg.c_str()));
  }
  argv.push_back(nullptr);
  UniqueFd go_read, go_write;
  if (deferred) {
    int go[2];
    if (::pipe2(go, O_CLOEXEC) != 0) return LastErrnoStatus("pipe2");
    go_read.Reset(go[0]);
    go_write.Reset(go[1]);
    // Above every number the child sets up, so dup2 cannot replace it.
    int moved = ::fcntl(go_read.get(), F_DUPFD_CLOEXEC, highest + 1);
    if (moved < 0) return LastErrnoStatus("fcntl(F_DUPFD_CLOEXEC)");
    go_read.Reset(moved);
  }

  // All signals blocked across fork, so the child runs none of the parent's
  // handlers before it resets them.
  sigset_t all, old;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t pid = ::fork();
  if (pid == 0) {
    ExecChild(sockets.second.get(), options.child_channel_fd,
              options.inherit_fds, error_write.get(), max_fd,
              options.new_process_group, argv.data(), go_read.get(),
              go_write.get());
  }
  int fork_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) return ErrnoStatus(fork_errno, absl::StrCat("fork for ", path));
  sockets.second.Reset();
  error_write.Reset();
  go_read.Reset();
  return ForkedHelper{pid,
                      std::move(sockets.first),
                      std::move(error_read),
                      std::move(go_write),
                      std::move(channel_options),
                      path};
}

absl::StatusOr<std::unique_ptr<HelperProcess>> HelperProcess::FinishSpawn(
    ForkedHelper forked) {
  const pid_t pid = forked.pid;
  const std::string& path = forked.path;
  UniqueFd error_read = std::move(forked.error_read);
  if (forked.go) {
    char go = 1;
    if (::write(forked.go.get(), &go, 1) != 1) {
      absl::Status status = LastErrnoStatus(absl::StrCat("start ", path));
      ::kill(pid, SIGKILL);
      ReapBlocking(pid);
      return status;
    }
    forked.go.Reset();
  }

  int exec_errno = 0;
  absl::Status read =
      ReadExact(error_read.get(), &exec_errno, sizeof(exec_errno));
  if (read.ok()) {
    ReapBlocking(pid);
    return ErrnoStatus(exec_errno, absl::StrCat("execv(", path, ")"));
  }
  if (!absl::IsOutOfRange(read)) {
    ::kill(pid, SIGKILL);
    ReapBlocking(pid);
    return absl::Status(read.code(),
                        absl::StrCat("starting ", path, ": ", read.message()));
  }

  // Safe against pid reuse: the child is ours and not reaped yet.
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    absl::Status status = LastErrnoStatus(
        absl::StrCat("pidfd_open for ", path, " (needs Linux 5.3 or later)"));
    ::kill(pid, SIGKILL);
    ReapBlocking(pid);
    return status;
  }
  std::string name = forked.channel_options.peer_name;
  return std::unique_ptr<HelperProcess>(new HelperProcess(
      pid, UniqueFd(pidfd),
      Channel(std::move(forked.socket), std::move(forked.channel_options)),
      std::move(name)));
}

absl::StatusOr<std::unique_ptr<PendingHelper>> PendingHelper::Fork(
    const HelperOptions& options) {
  ASSIGN_OR_RETURN(HelperProcess::ForkedHelper forked,
                   HelperProcess::ForkHelper(options, /*deferred=*/true));
  return std::unique_ptr<PendingHelper>(new PendingHelper(std::move(forked)));
}

PendingHelper::~PendingHelper() {
  if (!forked_) return;
  // Its end of the go pipe closed, the waiting child exits without exec.
  forked_->go.Reset();
  ReapBlocking(forked_->pid);
}

absl::StatusOr<std::unique_ptr<HelperProcess>> PendingHelper::Start() {
  if (!forked_) {
    return absl::FailedPreconditionError("the helper was started already");
  }
  HelperProcess::ForkedHelper forked = *std::move(forked_);
  forked_.reset();
  return HelperProcess::FinishSpawn(std::move(forked));
}

HelperProcess::HelperProcess(pid_t pid, UniqueFd pidfd, Channel channel,
                             std::string name)
    : pid_(pid),
      pidfd_(std::move(pidfd)),
      channel_(std::move(channel)),
      name_(std::move(name)) {}

HelperProcess::~HelperProcess() {
  // Killed before its channel closes: a helper that saw the end of its
  // channel first would take it as the agent's orderly end and act on it
  // (the stager removes its staging view) in the moment before the SIGKILL
  // lands, so that what a killed helper left behind depended on the
  // scheduler (serve_test's killed-stager case found its view's lock half
  // removed). Once the helper is reaped, the processes it started with
  // PR_SET_PDEATHSIG SIGKILL (the stager's run) have that signal pending
  // and run no more code of their own, so none of them sees the close.
  if (!reaped_) {
    // The pid is still ours (not reaped), so this cannot hit another process.
    ::kill(pid_, SIGKILL);
    ReapBlocking(pid_);
  }
  channel_.Close();
}

bool HelperProcess::WaitForExit(absl::Duration timeout) {
  if (reaped_) return true;
  absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    int wait_ms = -1;
    if (timeout != absl::InfiniteDuration()) {
      absl::Duration left =
          std::max(deadline - absl::Now(), absl::ZeroDuration());
      wait_ms = static_cast<int>(std::min<int64_t>(
          absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))),
          INT_MAX));
    }
    struct pollfd poll_fd = {pidfd_.get(), POLLIN, 0};
    int ready = ::poll(&poll_fd, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    break;
  }
  int status = 0;
  pid_t got;
  do {
    got = ::waitpid(pid_, &status, WNOHANG);
  } while (got < 0 && errno == EINTR);
  if (got != pid_) return false;
  reaped_ = true;
  wait_status_ = status;
  exit_description_ =
      absl::StrCat(name_, " (pid ", pid_, ") ", DescribeWaitStatus(status));
  return true;
}

absl::Status HelperProcess::DeathStatus(absl::string_view detail) const {
  return absl::UnavailableError(absl::StrCat(exit_description_, detail));
}

absl::Status HelperProcess::CheckAlive() {
  if (WaitForExit(absl::ZeroDuration())) return DeathStatus();
  return absl::OkStatus();
}

absl::Status HelperProcess::Call(const google::protobuf::MessageLite& request,
                                 google::protobuf::MessageLite* reply,
                                 std::vector<UniqueFd>* fds,
                                 absl::Span<const int> request_fds) {
  // How long a helper that closed its end of the channel gets to finish
  // dying before we report the closed channel instead. The wait ends as
  // soon as the pidfd says it has exited.
  constexpr absl::Duration kDyingGrace = absl::Seconds(10);
  if (reaped_) return DeathStatus();
  absl::Status status = channel_.Send(request, request_fds);
  if (!status.ok()) {
    if (absl::IsUnavailable(status) && WaitForExit(kDyingGrace)) {
      return DeathStatus();
    }
    return status;
  }
  status = channel_.ReceiveWatching(reply, fds, pidfd_.get());
  if (status.ok()) return status;
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:  // pidfd fired, or reset
    case absl::StatusCode::kOutOfRange:   // closed between frames
    case absl::StatusCode::kDataLoss:     // closed in a frame
      if (WaitForExit(kDyingGrace)) {
        channel_.Close();
        return DeathStatus();
      }
      break;
    default:
      break;
  }
  return status;
}

absl::Status HelperProcess::Stop(absl::Duration grace) {
  channel_.Close();
  if (!WaitForExit(grace)) {
    // Not reaped yet, so the pid is still ours.
    ::kill(pid_, SIGKILL);
    WaitForExit(absl::InfiniteDuration());
    return DeathStatus(absl::StrCat(" after it did not exit within ",
                                    absl::FormatDuration(grace),
                                    " of its channel closing"));
  }
  if (WIFEXITED(wait_status_) && WEXITSTATUS(wait_status_) == 0) {
    return absl::OkStatus();
  }
  return DeathStatus();
}

absl::StatusOr<Channel> ChannelFromFd(int fd, ChannelOptions options) {
  int type = 0;
  socklen_t length = sizeof(type);
  if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &length) != 0) {
    return LastErrnoStatus(
        absl::StrCat("channel descriptor ", fd, ": getsockopt(SO_TYPE)"));
  }
  int domain = 0;
  length = sizeof(domain);
  if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length) != 0) {
    return LastErrnoStatus(
        absl::StrCat("channel descriptor ", fd, ": getsockopt(SO_DOMAIN)"));
  }
  if (type != SOCK_STREAM || domain != AF_UNIX) {
    return absl::InvalidArgumentError(absl::StrCat(
        "channel descriptor ", fd, " is not a Unix stream socket"));
  }
  // So that nothing this program starts inherits its channel.
  if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
    return LastErrnoStatus(absl::StrCat("fcntl(", fd, ", F_SETFD)"));
  }
  return Channel(UniqueFd(fd), std::move(options));
}

}  // namespace ipc
}  // namespace garuda
