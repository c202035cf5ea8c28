#include "sandbox/pid1.h"

#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "sandbox/network_proxy.h"

extern char** environ;

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

namespace garuda {
namespace sandbox_internal {

[[noreturn]] void Fail(int error_fd, const absl::Status& status, char kind) {
  std::string text = absl::StrCat(std::string(1, kind), status.message());
  (void)!::write(error_fd, text.data(), text.size());
  ::_exit(kSetupFailed);
}

std::vector<char*> CStrings(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (const std::string& text : strings) {
    pointers.push_back(const_cast<char*>(text.c_str()));
  }
  pointers.push_back(nullptr);
  return pointers;
}

namespace {

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
  // No descriptor of the caller beyond 0, 1, 2 reaches the command. The
  // ways out of the cgroups are closed now, not at execve: an entry runs
  // without one, and must not be able to leave its limits.
  for (int fd : io.leave_cgroup_fds) ::close(fd);
  ::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  // A session of its own, without a controlling terminal: /dev/tty cannot
  // be opened (ENXIO), the terminal's foreground cannot be taken, and
  // kill(0, ...) reaches only the command's own group, not its launcher's
  // (a process group spans PID namespaces). Standard descriptors that are a
  // terminal stay usable for reads and writes; Ctrl-C reaches the command
  // through its supervisor (ForwardInterrupt). Safe: it only leaves.
  if (::setsid() < 0) Fail(io.error_fd, LastErrnoStatus("setsid"));
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
  // PID 1 forwards interrupts with handlers of its own and the caller
  // blocks some signals while it waits; the command starts with every
  // signal at its default, none blocked.
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

// Until CLOCK_REALTIME_COARSE is past `line_ns` (RunOptions::
// start_after_coarse_ns): at most one clock tick, most often already over
// once the sandbox is built.
void WaitForCoarseClockPast(int64_t line_ns) {
  for (;;) {
    struct timespec now;
    ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
    int64_t now_ns = static_cast<int64_t>(now.tv_sec) * 1000000000;
    if (now_ns + now.tv_nsec > line_ns) return;
    struct timespec pause = {0, 500000};
    ::nanosleep(&pause, nullptr);
  }
}

// The command's pid in PID 1's namespace, once started; read by the
// handler below.
volatile sig_atomic_t command_pid = 0;

// PID 1's handler for SIGINT and SIGQUIT: the supervisor forwards a Ctrl-C
// it received (the command, in a session of its own, is not in the
// terminal's foreground group) and PID 1 hands it to the command's group,
// as a terminal would. (A signal from outside the namespace reaches its
// PID 1 only through a handler.) Async-signal-safe: kill(2) only.
void ForwardInterrupt(int sig) {
  pid_t pid = command_pid;
  if (pid <= 0) return;
  int saved = errno;
  // Before the command's setsid its group is PID 1's: the command alone.
  if (::kill(-pid, sig) != 0) ::kill(pid, sig);
  errno = saved;
}

}  // namespace

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
  // PID 1 keeps capabilities in the sandbox's namespaces, so it keeps no
  // descriptor of the caller beyond its pipes (the command could not reach
  // them through /proc/1/fd anyway: it has fewer capabilities).
  std::vector<int> kept = {
      0,         1,           2,       io.error_fd, io.stdout_fd, io.stderr_fd,
      status_fd, io.proxy_fd, io.go_fd};
  kept.insert(kept.end(), io.leave_cgroup_fds.begin(),
              io.leave_cgroup_fds.end());
  CloseAllBut(std::move(kept));
  std::vector<std::string> env = Environment(policy);
  absl::Status status = WriteIdentityMaps(uid, gid);
  if (status.ok()) status = ApplyMountPlan(plan);
  // Safe: the UTS namespace is the sandbox's own; the host keeps its name.
  if (status.ok() && ::sethostname("garuda", 6) != 0) {
    status = LastErrnoStatus("sethostname");
  }
  if (status.ok() && !policy.network()) status = BringUpLoopback();
  if (status.ok() && policy.has_network_proxy()) {
    status =
        HandOverLoopbackListener(io.proxy_fd, policy.network_proxy().port());
  }
  if (!status.ok()) Fail(io.error_fd, status);
  // The supervisor has put this process in the cgroups (while the steps
  // above ran, none of which starts a process): the command and all it
  // starts are born in them.
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

  WaitForCoarseClockPast(options.start_after_coarse_ns);

  struct sigaction forward = {};
  forward.sa_handler = ForwardInterrupt;
  ::sigaction(SIGINT, &forward, nullptr);
  ::sigaction(SIGQUIT, &forward, nullptr);

  pid_t command =
      options.entry
          ? ::fork()
          : SpawnCommand({&limits, &plan, &confinement, &options, &env, &io});
  if (command < 0) Fail(io.error_fd, LastErrnoStatus("start the command"));
  if (command == 0) {
    StartCommand(limits, plan, confinement, options, env, io);
  }
  command_pid = command;
  // The supervisor blocked its stop signals before the clone (so that none
  // is lost), and they stay blocked until the command's pid is known: an
  // interrupt forwarded as soon as the command has printed something must
  // not find command_pid still 0.
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

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
  // Alone in the cgroups now: out of them, so that the supervisor may
  // remove them as soon as it reads the report. Safe: this moves only this
  // process, back to where the supervisor was; a write that fails leaves it
  // inside, and the supervisor then waits for its exit (CommandCgroups'
  // removal retries).
  for (int fd : io.leave_cgroup_fds) (void)!::write(fd, "0", 1);
  (void)!::write(status_fd, &command_status, sizeof command_status);
  ::_exit(0);
}

}  // namespace sandbox_internal
}  // namespace garuda
