#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "sandbox/cgroup.h"
#include "sandbox/confine.h"
#include "sandbox/mount_plan.h"

extern char** environ;

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

namespace garuda {
namespace {

constexpr int kSetupFailed = 127;

struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

absl::StatusOr<Pipe> MakePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return LastErrnoStatus("pipe2");
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// In a child: reports `status` on the error pipe and exits. The first byte
// says whose fault it is: 'S' the sandbox's setup, 'C' the command (exec).
// The supervisor reads it as the reason the run did not start.
[[noreturn]] void Fail(int error_fd, const absl::Status& status,
                       char kind = 'S') {
  std::string text = absl::StrCat(std::string(1, kind), status.message());
  (void)!::write(error_fd, text.data(), text.size());
  ::_exit(kSetupFailed);
}

absl::Status WriteProcFile(const char* path, const std::string& text) {
  UniqueFd fd(::open(path, O_WRONLY | O_CLOEXEC));
  if (!fd) return LastErrnoStatus(path);
  if (::write(fd.get(), text.data(), text.size()) !=
      static_cast<ssize_t>(text.size())) {
    return LastErrnoStatus(absl::StrCat("write ", path));
  }
  return absl::OkStatus();
}

// Safe: a process may map only its own uid and gid into a user namespace it
// created, and with setgroups denied it cannot drop a group it holds to get
// past a "deny this group" permission.
absl::Status WriteIdentityMaps(uid_t uid, gid_t gid) {
  RETURN_IF_ERROR(WriteProcFile("/proc/self/setgroups", "deny"));
  RETURN_IF_ERROR(
      WriteProcFile("/proc/self/uid_map", absl::StrCat(uid, " ", uid, " 1")));
  RETURN_IF_ERROR(
      WriteProcFile("/proc/self/gid_map", absl::StrCat(gid, " ", gid, " 1")));
  return absl::OkStatus();
}

// The new network namespace has only a loopback, down; bring it up so that
// servers and clients inside the sandbox can talk to each other. Safe: the
// namespace is ours and holds no other interface.
absl::Status BringUpLoopback() {
  UniqueFd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!sock) return LastErrnoStatus("socket for lo");
  struct ifreq request = {};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  if (::ioctl(sock.get(), SIOCGIFFLAGS, &request) != 0) {
    return LastErrnoStatus("SIOCGIFFLAGS lo");
  }
  request.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (::ioctl(sock.get(), SIOCSIFFLAGS, &request) != 0) {
    return LastErrnoStatus("SIOCSIFFLAGS lo");
  }
  return absl::OkStatus();
}

std::vector<std::string> Environment(const SandboxPolicy& policy) {
  std::vector<std::string> env;
  for (const auto& [name, value] : policy.environment()) {
    env.push_back(absl::StrCat(name, "=", value));
  }
  return env;
}

// NULL-terminated pointers into `strings`, for execvp.
std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (const std::string& text : strings) {
    pointers.push_back(const_cast<char*>(text.c_str()));
  }
  pointers.push_back(nullptr);
  return pointers;
}

// Closes every descriptor from 3 up that is not in `keep`.
void CloseAllBut(std::vector<int> keep) {
  std::sort(keep.begin(), keep.end());
  unsigned int next = 3;
  for (int fd : keep) {
    if (fd < static_cast<int>(next)) continue;
    if (static_cast<unsigned int>(fd) > next) ::close_range(next, fd - 1, 0);
    next = fd + 1;
  }
  ::close_range(next, ~0U, 0);
}

struct ChildIo {
  int error_fd = -1;
  int stdout_fd = -1;  // -1: inherit
  int stderr_fd = -1;
  bool null_stdin = false;
  // With cgroups: PID 1 waits for one byte on it before anything else (the
  // supervisor moves it into the cgroups first). The byte's bits say which
  // limits the cgroups took over: kMemoryByCgroup, kPidsByCgroup.
  int go_fd = -1;
};

constexpr char kMemoryByCgroup = 1;
constexpr char kPidsByCgroup = 2;

// The command's process: standard descriptors, limits, confinement, exec.
[[noreturn]] void StartCommand(const Limits& limits, const MountPlan& plan,
                               Confinement& confinement,
                               const RunOptions& options,
                               std::vector<std::string>& env,
                               const ChildIo& io) {
  if (io.null_stdin) {
    int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd < 0 || ::dup2(null_fd, 0) < 0) {
      Fail(io.error_fd, LastErrnoStatus("stdin /dev/null"));
    }
  }
  if (io.stdout_fd >= 0 && ::dup2(io.stdout_fd, 1) < 0) {
    Fail(io.error_fd, LastErrnoStatus("dup2 stdout"));
  }
  if (io.stderr_fd >= 0 && ::dup2(io.stderr_fd, 2) < 0) {
    Fail(io.error_fd, LastErrnoStatus("dup2 stderr"));
  }
  // No descriptor of the caller beyond 0, 1, 2 reaches the command.
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  absl::Status status = SetResourceLimits(limits);
  if (status.ok()) status = DropCapabilities();
  if (!status.ok()) Fail(io.error_fd, status);
  // A working folder that cannot be entered (denied, absent) is the
  // request's fault, not the sandbox's: no host fallback for it.
  if (::chdir(plan.working_directory.c_str()) != 0) {
    Fail(io.error_fd,
         LastErrnoStatus(
             absl::StrCat("working folder ", plan.working_directory)),
         'C');
  }
  // The caller may ignore SIGINT and SIGQUIT while it waits (as system(3)
  // does); the command starts with every signal at its default.
  for (int sig = 1; sig < NSIG; ++sig) ::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  status = ConfineCommand(confinement);
  if (!status.ok()) Fail(io.error_fd, status);
  if (options.entry) ::_exit(options.entry());

  std::vector<char*> argv = CStrings(options.argv);
  std::vector<char*> envp = CStrings(env);
  environ = envp.data();  // execvp looks up PATH in the new environment
  ::execvp(argv[0], argv.data());
  Fail(io.error_fd, LastErrnoStatus(absl::StrCat("execvp ", options.argv[0])),
       'C');
}

struct CommandStart {
  const Limits* limits;
  const MountPlan* plan;
  Confinement* confinement;
  const RunOptions* options;
  std::vector<std::string>* env;
  const ChildIo* io;
};

int StartCommandOnItsStack(void* arg) {
  CommandStart* start = static_cast<CommandStart*>(arg);
  StartCommand(*start->limits, *start->plan, *start->confinement,
               *start->options, *start->env, *start->io);
}

// clone(2) with `flags` (CLONE_VM | CLONE_VFORK and more), running fn(arg)
// on a stack of its own; returns once the child has called execve or
// exited (CLONE_VFORK), then frees that stack. The top `kPresentBytes` of
// the stack are made present first: one call instead of a page fault for
// each page the child's calls write. Every signal is blocked across the
// clone, so that no handler of the caller runs in the child on the shared
// memory; the child unblocks them (`*mask` is the caller's mask). -1 with
// errno on failure.
pid_t CloneOnOwnStack(int (*fn)(void*), void* arg, unsigned long flags,
                      sigset_t* mask) {
  // StartCommand reads small files through a 64 KiB buffer on its stack.
  constexpr size_t kStackBytes = 512 * 1024;
  constexpr size_t kGuardBytes = 4096;
  constexpr size_t kPresentBytes = 64 * 1024;
  void* memory =
      ::mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (memory == MAP_FAILED) return -1;
  // The stack grows down: an overflow faults on the guard page instead of
  // writing over whatever lies below.
  if (::mprotect(memory, kGuardBytes, PROT_NONE) != 0) {
    int saved = errno;
    ::munmap(memory, kStackBytes + kGuardBytes);
    errno = saved;
    return -1;
  }
  char* top = static_cast<char*>(memory) + kGuardBytes + kStackBytes;
  // On a kernel older than 5.14 (no MADV_POPULATE_WRITE) the pages fault
  // in as the child writes them.
  (void)::madvise(top - kPresentBytes, kPresentBytes, MADV_POPULATE_WRITE);
  sigset_t all;
  sigfillset(&all);
  ::sigprocmask(SIG_SETMASK, &all, mask);
  pid_t pid = ::clone(fn, top, flags, arg);
  int saved = errno;
  ::sigprocmask(SIG_SETMASK, mask, nullptr);
  ::munmap(memory, kStackBytes + kGuardBytes);
  errno = saved;
  return pid;
}

// Starts the command's process the way posix_spawn does: it shares PID 1's
// memory (CLONE_VM) on a stack of its own, and PID 1 waits (CLONE_VFORK)
// until its execve gives it a memory of its own, or it exits. Unlike
// fork(), nothing of PID 1's memory is copied or write-protected, so
// neither process takes copy-on-write faults, which cost 15 to 40 us each
// in a VM (docs/sandbox.md, "Start-up of garuda-stager"). Safe: until
// execve the child runs only StartCommand (our code, the same as after a
// fork), and PID 1 runs nothing meanwhile; what the child changes in the
// shared memory (its allocations, `environ`) PID 1 never reads again. The
// child resets every signal handler before it unblocks the signals.
pid_t SpawnCommand(CommandStart start) {
  sigset_t mask;
  return CloneOnOwnStack(StartCommandOnItsStack, &start,
                         CLONE_VM | CLONE_VFORK | SIGCHLD, &mask);
}

// PID 1 of the sandbox: builds the root, starts the command, reaps every
// process, and writes the command's wait status on `status_fd`.
[[noreturn]] void SandboxInit(const SandboxPolicy& policy,
                              const MountPlan& plan, Confinement& confinement,
                              const RunOptions& options, uid_t uid, gid_t gid,
                              const ChildIo& io, int status_fd) {
  // The whole sandbox dies with its supervisor. Had the supervisor died
  // before this prctl, the read end of the status pipe (which only it holds)
  // is closed, and poll says so.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  struct pollfd lifeline = {status_fd, POLLOUT, 0};
  if (::poll(&lifeline, 1, 0) == 1 && (lifeline.revents & POLLERR)) {
    ::_exit(kSetupFailed);
  }
  Limits limits = policy.limits();
  if (io.go_fd >= 0) {
    char go = 0;
    ssize_t got;
    do {
      got = ::read(io.go_fd, &go, 1);
    } while (got < 0 && errno == EINTR);
    if (got != 1) ::_exit(kSetupFailed);  // the supervisor gave up
    ::close(io.go_fd);
    // A limit in a cgroup is not also an rlimit: RLIMIT_AS would fail
    // allocations before the cgroup's OOM killer could say what happened.
    if (go & kMemoryByCgroup) limits.set_memory_bytes(0);
    if (go & kPidsByCgroup) limits.set_processes(0);
  }
  // PID 1 keeps capabilities in the sandbox's namespaces, so it keeps no
  // descriptor of the caller beyond its four pipes (the command could not
  // reach them through /proc/1/fd anyway: it has fewer capabilities).
  CloseAllBut({0, 1, 2, io.error_fd, io.stdout_fd, io.stderr_fd, status_fd});
  std::vector<std::string> env = Environment(policy);
  absl::Status status = WriteIdentityMaps(uid, gid);
  if (status.ok()) status = ApplyMountPlan(plan);
  // Safe: the UTS namespace is the sandbox's own; the host keeps its name.
  if (status.ok() && ::sethostname("garuda", 6) != 0) {
    status = LastErrnoStatus("sethostname");
  }
  if (status.ok() && !policy.network()) status = BringUpLoopback();
  if (!status.ok()) Fail(io.error_fd, status);

  pid_t command =
      options.entry
          ? ::fork()
          : SpawnCommand({&limits, &plan, &confinement, &options, &env, &io});
  if (command < 0) Fail(io.error_fd, LastErrnoStatus("start the command"));
  if (command == 0) {
    StartCommand(limits, plan, confinement, options, env, io);
  }

  ::close(io.error_fd);
  if (io.stdout_fd >= 0) ::close(io.stdout_fd);
  if (io.stderr_fd >= 0) ::close(io.stderr_fd);
  int command_status = -1;
  for (;;) {
    int wait_status;
    pid_t ended = ::waitpid(-1, &wait_status, 0);
    if (ended < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: nothing left
    }
    if (ended == command) {
      command_status = wait_status;
      if (!policy.keep_processes()) break;
    }
  }
  // Every process still in the namespace ends before the end is reported,
  // so that a caller may return as soon as it reads it (leaving PID 1 would
  // end them too, but only after the report). Safe: kill(-1) reaches only
  // the processes of this PID namespace and of namespaces below it, all of
  // them the command's, and never PID 1 itself.
  ::kill(-1, SIGKILL);
  for (;;) {
    if (::waitpid(-1, nullptr, 0) > 0 || errno == EINTR) continue;
    break;  // ECHILD: nothing left
  }
  (void)!::write(status_fd, &command_status, sizeof command_status);
  ::_exit(0);
}

struct Pid1Start {
  const SandboxPolicy* policy;
  const MountPlan* plan;
  Confinement* confinement;
  const RunOptions* options;
  uid_t uid;
  gid_t gid;
  ChildIo io;
  int status_fd;
  int status_read_fd;  // the caller's end, closed in PID 1
  sigset_t mask;       // the caller's signal mask, PID 1's too
};

// PID 1 in the caller's memory (RunInSandbox's shared-memory path). It must
// not touch the caller's objects beyond reading them: a descriptor is
// closed by number, never through the caller's UniqueFd.
int Pid1SharingMemory(void* arg) {
  Pid1Start* start = static_cast<Pid1Start*>(arg);
  // Before the lifeline check in SandboxInit, which looks at whether the
  // caller still holds the read end.
  ::close(start->status_read_fd);
  ::sigprocmask(SIG_SETMASK, &start->mask, nullptr);
  SandboxInit(*start->policy, *start->plan, *start->confinement,
              *start->options, start->uid, start->gid, start->io,
              start->status_fd);
}

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
bool ReadSome(int fd, const Captured& into, size_t limit) {
  char buffer[65536];
  ssize_t n = ::read(fd, buffer, sizeof buffer);
  if (n < 0) return errno == EINTR || errno == EAGAIN;
  if (n == 0) return false;
  size_t room = limit > into.data->size() ? limit - into.data->size() : 0;
  into.data->append(buffer, std::min<size_t>(room, n));
  if (static_cast<size_t>(n) > room) *into.truncated = true;
  return true;
}

struct Supervised {
  int wait_status = 0;
  bool timed_out = false;
  // What PID 1 wrote on the status pipe: the command's wait status (-1:
  // PID 1 found none), once status_read.
  bool status_read = false;
  int command_status = -1;
};

// Waits for the child behind `pidfd`, reading captured output as it comes
// and killing the child when the wall time is over. With a `status_fd`, it
// also reads the command's wait status that PID 1 writes there; with
// `stop_at_status` it returns once that status is in and the output is
// read, without waiting for the child's own exit.
absl::StatusOr<Supervised> Supervise(pid_t pid, UniqueFd pidfd,
                                     UniqueFd stdout_read, UniqueFd stderr_read,
                                     int status_fd, bool stop_at_status,
                                     uint64_t wall_ms, size_t limit,
                                     RunResult* result) {
  Supervised supervised;
  int64_t deadline = wall_ms ? NowMs() + static_cast<int64_t>(wall_ms) : -1;
  bool exited = false;
  auto done_waiting = [&] {
    return exited || (stop_at_status && supervised.status_read &&
                      supervised.command_status != -1);
  };
  while (!done_waiting() || stdout_read || stderr_read) {
    struct pollfd fds[4];
    int count = 0;
    int pid_index = -1, out_index = -1, err_index = -1, status_index = -1;
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
    int timeout = -1;
    if (deadline >= 0 && !done_waiting() && !supervised.timed_out) {
      timeout = static_cast<int>(std::max<int64_t>(0, deadline - NowMs()));
    }
    int ready = ::poll(fds, count, timeout);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return LastErrnoStatus("poll");
    }
    if (ready == 0) {
      supervised.timed_out = true;
      if (::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0) !=
          0) {
        return LastErrnoStatus("kill the sandbox after its wall time");
      }
      continue;
    }
    if (out_index >= 0 && fds[out_index].revents &&
        !ReadSome(stdout_read.get(),
                  {&result->stdout_data, &result->stdout_truncated}, limit)) {
      stdout_read.Reset();
    }
    if (err_index >= 0 && fds[err_index].revents &&
        !ReadSome(stderr_read.get(),
                  {&result->stderr_data, &result->stderr_truncated}, limit)) {
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

// The captured output of `from` into `to`.
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

// The run's result from what the supervisor saw: the error pipe's text
// ('S' or 'C', then the reason), the wall time, the OOM kills of the
// command's cgroup, and the command's wait status as PID 1 reported it.
// `pid1_wait_status` is asked for only when PID 1 reported none.
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

// Creates the missing parts of project-relative denied paths, so that they
// exist to be covered and the command cannot make them (.git/hooks). Under
// a file (a worktree's .git is a file) nothing can be created: skipped.
absl::Status CreateMissingDeniedPaths(const SandboxPolicy& policy) {
  if (!policy.project_writable()) return absl::OkStatus();
  for (const std::string& path : policy.denied_paths()) {
    if (path.empty() || path[0] == '/') continue;
    std::string full = policy.project();
    bool blocked = false;
    for (absl::string_view part :
         absl::StrSplit(path, '/', absl::SkipEmpty())) {
      full = JoinPath(full, part);
      struct stat st;
      if (::lstat(full.c_str(), &st) != 0) break;
      if (!S_ISDIR(st.st_mode)) {
        blocked = true;
        break;
      }
    }
    if (blocked) continue;
    full = JoinPath(policy.project(), path);
    struct stat st;
    if (::lstat(full.c_str(), &st) == 0) continue;
    RETURN_IF_ERROR(MakeDirectories(full, 0755));
  }
  return absl::OkStatus();
}

// While alive, SIGINT and SIGQUIT are ignored (when `active`).
class IgnoreInterrupts {
 public:
  explicit IgnoreInterrupts(bool active) : active_(active) {
    if (!active_) return;
    struct sigaction ignore = {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGINT, &ignore, &old_int_);
    ::sigaction(SIGQUIT, &ignore, &old_quit_);
  }
  ~IgnoreInterrupts() {
    if (!active_) return;
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGQUIT, &old_quit_, nullptr);
  }
  IgnoreInterrupts(const IgnoreInterrupts&) = delete;
  IgnoreInterrupts& operator=(const IgnoreInterrupts&) = delete;

 private:
  bool active_;
  struct sigaction old_int_ = {};
  struct sigaction old_quit_ = {};
};

struct Child {
  pid_t pid;
  UniqueFd pidfd;
};

// clone(2) as fork(2), with new namespaces and a pidfd. Safe: creating user
// namespaces needs no privilege, and every other namespace is owned by the
// new user namespace, so the capabilities the child gets in them count only
// there, never on the host's resources.
absl::StatusOr<Child> CloneChild(unsigned long flags) {
  int pidfd = -1;
  // x86-64 and arm64 order: flags, stack, parent_tid (the pidfd), child_tid,
  // tls.
  long pid = ::syscall(SYS_clone, flags | CLONE_PIDFD | SIGCHLD, nullptr,
                       &pidfd, nullptr, nullptr);
  if (pid < 0) return LastErrnoStatus("clone");
  return Child{static_cast<pid_t>(pid), UniqueFd(pid == 0 ? -1 : pidfd)};
}

}  // namespace

absl::StatusOr<RunResult> RunInSandbox(const SandboxPolicy& policy,
                                       const RunOptions& options) {
  if (options.argv.empty() && !options.entry) {
    return absl::InvalidArgumentError("no command to run");
  }
  RETURN_IF_ERROR(CreateMissingDeniedPaths(policy));
  ASSIGN_OR_RETURN(MountPlan plan, BuildMountPlan(policy));
  ASSIGN_OR_RETURN(Confinement confinement,
                   PrepareConfinement(policy, plan.writable));
  ASSIGN_OR_RETURN(Pipe error_pipe, MakePipe());
  ASSIGN_OR_RETURN(Pipe status_pipe, MakePipe());
  Pipe out, err;
  if (options.capture_output) {
    ASSIGN_OR_RETURN(out, MakePipe());
    ASSIGN_OR_RETURN(err, MakePipe());
  }
  // Made before the child, so that a cgroup that cannot be made is only a
  // note (the rlimits stay), never a half-started sandbox.
  CommandCgroups cgroups =
      CommandCgroups::Create(policy.limits().memory_bytes(),
                             policy.limits().processes(), options.use_cgroups);
  Pipe go;
  if (!cgroups.empty()) {
    ASSIGN_OR_RETURN(go, MakePipe());
  }
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  unsigned long flags =
      CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
  if (!policy.network()) flags |= CLONE_NEWNET;

  auto cannot_clone = [](absl::string_view why) {
    RunResult failed = RunResult::FailedToStart(
        absl::StrCat("cannot create the sandbox's namespaces (", why, ")"));
    failed.sandbox_failed = true;
    return failed;
  };

  // A caller that exits right after the run and has nothing to do while it
  // lasts (no output to capture, no wall time to keep, no cgroup to fill):
  // PID 1 shares its memory (CLONE_VM, as SpawnCommand does for the
  // command) and the caller sleeps until PID 1 has exited (CLONE_VFORK).
  // Nothing of the caller's memory is copied or write-protected, so neither
  // side takes the copy-on-write faults that a fork of this large program
  // costs (docs/sandbox.md). Safe: PID 1 runs only SandboxInit (our code,
  // the same as after a fork) while the caller runs nothing; the command
  // gets a memory of its own at execve, as before.
  // A kernel that refuses CLONE_VM with these flags (EINVAL) gets the fork
  // path below.
  pid_t shared_pid = -1;
  if (options.return_before_teardown && cgroups.empty() &&
      !options.capture_output && policy.limits().wall_time_ms() == 0 &&
      !options.entry) {
    IgnoreInterrupts ignore(true);
    char** caller_environ = environ;
    Pid1Start start{&policy,
                    &plan,
                    &confinement,
                    &options,
                    uid,
                    gid,
                    ChildIo{error_pipe.write.get(), -1, -1, false, -1},
                    status_pipe.write.get(),
                    status_pipe.read.get(),
                    {}};
    shared_pid =
        CloneOnOwnStack(Pid1SharingMemory, &start,
                        flags | CLONE_VM | CLONE_VFORK | SIGCHLD, &start.mask);
    int clone_errno = errno;
    // The command's process set `environ` to the command's environment in
    // the shared memory before its execve.
    environ = caller_environ;
    if (shared_pid < 0 && clone_errno != EINVAL) {
      errno = clone_errno;
      return cannot_clone(LastErrnoStatus("clone").message());
    }
  }
  if (shared_pid > 0) {
    // PID 1 has exited (its memory released); the kernel may still be
    // tearing its namespaces down. It stays unreaped until this process
    // exits (return_before_teardown), unless it reported nothing.
    error_pipe.write.Reset();
    status_pipe.write.Reset();
    ASSIGN_OR_RETURN(std::string error, ReadAll(error_pipe.read.get()));
    int command_status = -1;
    ssize_t got =
        ::read(status_pipe.read.get(), &command_status, sizeof command_status);
    bool command_reported =
        got == sizeof command_status && command_status != -1;
    RunResult outcome = Outcome(error, false, 0, command_reported,
                                command_status, [shared_pid] {
                                  int wait_status = 0;
                                  ::waitpid(shared_pid, &wait_status, 0);
                                  return wait_status;
                                });
    outcome.limits_note = cgroups.Note();
    return outcome;
  }

  absl::StatusOr<Child> child = CloneChild(flags);
  if (!child.ok()) return cannot_clone(child.status().message());
  if (child->pid == 0) {
    error_pipe.read.Reset();
    status_pipe.read.Reset();
    out.read.Reset();
    err.read.Reset();
    go.write.Reset();
    ChildIo io{error_pipe.write.get(), out.write.get(), err.write.get(),
               options.capture_output, go.read.get()};
    SandboxInit(policy, plan, confinement, options, uid, gid, io,
                status_pipe.write.get());
  }
  error_pipe.write.Reset();
  status_pipe.write.Reset();
  out.write.Reset();
  err.write.Reset();
  if (go.write) {
    go.read.Reset();
    // PID 1 waits for this before it starts anything: every process of the
    // command is born in the cgroups.
    cgroups.AddProcess(child->pid);
    char by_cgroup = (cgroups.memory() ? kMemoryByCgroup : 0) |
                     (cgroups.pids() ? kPidsByCgroup : 0);
    (void)!::write(go.write.get(), &by_cgroup, 1);
    go.write.Reset();
  }

  RunResult result;
  IgnoreInterrupts ignore(!options.capture_output);
  // Cgroups can be removed only once PID 1 has left them.
  bool stop_at_status = options.return_before_teardown && cgroups.empty();
  ASSIGN_OR_RETURN(
      Supervised supervised,
      Supervise(child->pid, std::move(child->pidfd), std::move(out.read),
                std::move(err.read), status_pipe.read.get(), stop_at_status,
                policy.limits().wall_time_ms(), options.capture_limit,
                &result));
  ASSIGN_OR_RETURN(std::string error, ReadAll(error_pipe.read.get()));
  int command_status = supervised.command_status;
  ssize_t got = sizeof command_status;
  if (!supervised.status_read) {
    got =
        ::read(status_pipe.read.get(), &command_status, sizeof command_status);
  }

  uint64_t oom_kills = cgroups.OomKills();
  bool command_reported = got == sizeof command_status && command_status != -1;
  RunResult outcome =
      Outcome(error, supervised.timed_out, oom_kills, command_reported,
              command_status, [&] { return supervised.wait_status; });
  outcome.oom_kills = oom_kills;
  outcome.limits_note = cgroups.Note();
  TakeOutput(std::move(result), &outcome);
  return outcome;
}

absl::StatusOr<RunResult> RunOnHost(const RunOptions& options,
                                    const std::string& directory) {
  if (options.argv.empty()) return absl::InvalidArgumentError("no command");
  ASSIGN_OR_RETURN(Pipe error_pipe, MakePipe());
  Pipe out, err;
  if (options.capture_output) {
    ASSIGN_OR_RETURN(out, MakePipe());
    ASSIGN_OR_RETURN(err, MakePipe());
  }
  ASSIGN_OR_RETURN(Child child, CloneChild(0));
  if (child.pid == 0) {
    int error_fd = error_pipe.write.get();
    if (options.capture_output) {
      if (::dup2(out.write.get(), 1) < 0 || ::dup2(err.write.get(), 2) < 0) {
        Fail(error_fd, LastErrnoStatus("dup2"));
      }
    }
    if (::chdir(directory.c_str()) != 0) {
      Fail(error_fd, LastErrnoStatus(absl::StrCat("chdir ", directory)));
    }
    // With a wall time, the command leads a process group of its own, so
    // that a timeout ends what it started in the background too. Without
    // one it stays in the caller's group: an interactive command keeps the
    // terminal.
    if (options.wall_time_ms > 0 && ::setpgid(0, 0) != 0) {
      Fail(error_fd, LastErrnoStatus("setpgid"));
    }
    std::vector<char*> argv = CStrings(options.argv);
    ::execvp(argv[0], argv.data());
    Fail(error_fd, LastErrnoStatus(absl::StrCat("execvp ", argv[0])), 'C');
  }
  error_pipe.write.Reset();
  out.write.Reset();
  err.write.Reset();
  RunResult result;
  ASSIGN_OR_RETURN(
      Supervised supervised,
      Supervise(child.pid, std::move(child.pidfd), std::move(out.read),
                std::move(err.read), -1, false, options.wall_time_ms,
                options.capture_limit, &result));
  ASSIGN_OR_RETURN(std::string error, ReadAll(error_pipe.read.get()));
  RunResult outcome = error.empty() ? FromWaitStatus(supervised.wait_status)
                                    : RunResult::FailedToStart(error.substr(1));
  if (error.empty() && supervised.timed_out) {
    outcome = RunResult();
    outcome.kind = RunResult::Kind::kTimedOut;
    // The group's leader is dead and reaped, but its pid stays the group's
    // id while any member lives, and cannot be reused for a new group.
    ::kill(-child.pid, SIGKILL);
  }
  TakeOutput(std::move(result), &outcome);
  return outcome;
}

}  // namespace garuda
