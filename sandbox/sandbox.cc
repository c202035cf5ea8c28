// The entry points: RunInSandbox puts the supervisor (sandbox/supervisor.h)
// and PID 1 (sandbox/pid1.h) together; RunOnHost is the supervisor alone.
#include "sandbox/sandbox.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "sandbox/cgroup.h"
#include "sandbox/confine.h"
#include "sandbox/mount_plan.h"
#include "sandbox/network_proxy.h"
#include "sandbox/pid1.h"
#include "sandbox/supervisor.h"

namespace garuda {
namespace {

using sandbox_internal::ChildIo;
using sandbox_internal::Pipe;

// Creates what is missing of the project-relative paths the sandbox covers,
// so that they exist to be covered and the command cannot make them: denied
// paths as folders (.git/hooks), read-only project paths as an empty file
// (.git/config, so that a command cannot plant one in a .git that has none
// with core.fsmonitor in it), or a folder when they end in '/'. Under a
// file (a worktree's .git is a file) nothing can be created: skipped.
absl::Status CreateMissingProjectPaths(const SandboxPolicy& policy) {
  if (!policy.project_writable()) return absl::OkStatus();
  auto create = [&](const std::string& path, bool folder) -> absl::Status {
    if (path.empty() || path[0] == '/') return absl::OkStatus();
    std::string full = policy.project();
    std::vector<absl::string_view> parts =
        absl::StrSplit(path, '/', absl::SkipEmpty());
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      full = JoinPath(full, parts[i]);
      struct stat st;
      if (::lstat(full.c_str(), &st) != 0) break;
      if (!S_ISDIR(st.st_mode)) return absl::OkStatus();
    }
    full = JoinPath(policy.project(), path);
    while (full.size() > 1 && full.back() == '/') full.pop_back();
    struct stat st;
    if (::lstat(full.c_str(), &st) == 0) return absl::OkStatus();
    if (folder) return MakeDirectories(full, 0755);
    RETURN_IF_ERROR(MakeDirectories(Dirname(full), 0755));
    // O_EXCL | O_NOFOLLOW: a link planted meanwhile is not followed.
    int fd = ::open(full.c_str(),
                    O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno != EEXIST) {
      return LastErrnoStatus(absl::StrCat("create ", full));
    }
    if (fd >= 0) ::close(fd);
    return absl::OkStatus();
  };
  for (const std::string& path : policy.denied_paths()) {
    RETURN_IF_ERROR(create(path, true));
  }
  for (const std::string& path : policy.read_only_project_paths()) {
    RETURN_IF_ERROR(create(path, !path.empty() && path.back() == '/'));
  }
  return absl::OkStatus();
}

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

// The result of a run that a stop signal ended.
void NoteStop(int sig, RunResult* outcome) {
  if (sig == 0) return;
  *outcome = RunResult::Signaled(SIGKILL);
  const char* name = ::sigabbrev_np(sig);
  outcome->reason = absl::StrCat(
      "ended with everything it started: the supervisor was sent SIG",
      name != nullptr ? name : "?");
}

// The result of a run that the caller stopped (RunOptions::cancel_fd): a
// command that had not started stays a failure to start.
void NoteCancel(const sandbox_internal::Supervised& supervised,
                const std::string& error, RunResult* outcome) {
  if (!supervised.cancelled || !error.empty()) return;
  *outcome = RunResult();
  outcome->kind = RunResult::Kind::kStopped;
}

}  // namespace

absl::StatusOr<RunResult> RunInSandbox(const SandboxPolicy& policy,
                                       const RunOptions& options) {
  using namespace sandbox_internal;  // NOLINT: this file's two halves
  if (options.argv.empty() && !options.entry) {
    return absl::InvalidArgumentError("no command to run");
  }
  RETURN_IF_ERROR(CheckNetworkProxy(policy, options.proxy_handoff_fd));
  RETURN_IF_ERROR(CreateMissingProjectPaths(policy));
  ASSIGN_OR_RETURN(MountPlan plan,
                   BuildMountPlan(policy, {options.private_walk, options.stored_walk}));
  ASSIGN_OR_RETURN(Confinement confinement,
                   PrepareConfinement(policy, plan.writable));
  ASSIGN_OR_RETURN(Pipe error_pipe, MakePipe());
  ASSIGN_OR_RETURN(Pipe status_pipe, MakePipe());
  Pipe out, err;
  if (options.capture_output) {
    ASSIGN_OR_RETURN(out, MakePipe());
    ASSIGN_OR_RETURN(err, MakePipe());
  }
  // Before the clone, so that no stop signal is lost; destroyed last, after
  // the cgroups are removed, since it may raise the signal that ends us.
  StopSignals signals(/*interrupts=*/true, options.defer_stop_signal);
  // Made before the child, so that a cgroup that cannot be made is only a
  // note (the rlimits stay), never a half-started sandbox.
  CommandCgroups cgroups =
      CommandCgroups::Create(policy.limits().memory_bytes(),
                             policy.limits().processes(), options.use_cgroups);
  // A socket pair rather than a pipe: PID 1 may have died of a failed
  // setup before it reads, and the write must then fail, not raise SIGPIPE.
  Pipe go;
  if (!cgroups.empty()) {
    int ends[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0) {
      return LastErrnoStatus("socketpair");
    }
    go = Pipe{UniqueFd(ends[0]), UniqueFd(ends[1])};
  }
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  unsigned long flags =
      CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
  if (!policy.network()) flags |= CLONE_NEWNET;

  // PID 1 is born in the cgroups where the supervisor's thread can step in
  // for the clone (cgroup v1), instead of being moved there afterwards; and
  // then leaves them by itself at the end.
  absl::StatusOr<bool> entered = cgroups.EnterThread();
  if (!entered.ok()) return entered.status();
  const std::vector<int> ways_back =
      *entered ? cgroups.WaysBack() : std::vector<int>();
  absl::StatusOr<Child> child = CloneChild(flags);
  if (*entered && (child.ok() ? child->pid != 0 : true)) {
    absl::Status left = cgroups.LeaveThread();
    if (!left.ok()) {
      // Still inside the command's cgroup: the run does not go on (PID 1,
      // waiting for the go byte, dies with its supervisor's socket).
      if (child.ok()) ::kill(child->pid, SIGKILL);
      return left;
    }
  }
  if (!child.ok()) {
    RunResult failed = RunResult::FailedToStart(
        absl::StrCat("cannot create the sandbox's namespaces (",
                     child.status().message(), ")"));
    failed.sandbox_failed = true;
    return failed;
  }
  if (child->pid == 0) {
    error_pipe.read.Reset();
    status_pipe.read.Reset();
    out.read.Reset();
    err.read.Reset();
    go.write.Reset();
    ChildIo io{error_pipe.write.get(), out.write.get(), err.write.get(),
               options.capture_output, go.read.get()};
    io.proxy_fd = options.proxy_handoff_fd;
    io.leave_cgroup_fds = ways_back;
    SandboxInit(policy, plan, confinement, options, uid, gid, io,
                status_pipe.write.get());
  }
  error_pipe.write.Reset();
  status_pipe.write.Reset();
  out.write.Reset();
  err.write.Reset();
  const bool pid1_leaves_cgroups = !ways_back.empty();
  if (go.write) {
    go.read.Reset();
    // PID 1 builds the sandbox meanwhile (the move of a whole process into
    // a cgroup v1 waits out an RCU grace period, 5 to 20 ms here) and waits
    // for this byte before it starts the command: every process of the
    // command is born in the cgroups. Born there already (EnterThread), it
    // waits only until the supervisor's thread has left them.
    if (!*entered) cgroups.AddProcess(child->pid);
    char by_cgroup = (cgroups.memory() ? kMemoryByCgroup : 0) |
                     (cgroups.pids() ? kPidsByCgroup : 0);
    (void)!::send(go.write.get(), &by_cgroup, 1, MSG_NOSIGNAL);
    go.write.Reset();
  }

  RunResult result;
  SuperviseOptions supervise;
  supervise.status_fd = status_pipe.read.get();
  // Cgroups can be removed only once PID 1 has left them: before its report
  // when it was given the way out, else at its exit.
  supervise.stop_at_status = options.return_before_teardown &&
                             (cgroups.empty() || pid1_leaves_cgroups);
  supervise.wall_ms = policy.limits().wall_time_ms();
  supervise.capture_limit = options.capture_limit;
  // Sharing the terminal, Ctrl-C is the person's word to the command (as
  // system(3) lets it through); capturing, it ends the run like SIGTERM.
  supervise.forward_interrupts = !options.capture_output;
  supervise.signals = &signals;
  supervise.cancel_fd = options.cancel_fd;
  supervise.on_output = options.on_output;
  ASSIGN_OR_RETURN(
      Supervised supervised,
      Supervise(child->pid, std::move(child->pidfd), std::move(out.read),
                std::move(err.read), supervise, &result));
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
  NoteCancel(supervised, error, &outcome);
  NoteStop(signals.Stopped(), &outcome);
  outcome.oom_kills = oom_kills;
  outcome.limits_note = cgroups.Note();
  TakeOutput(std::move(result), &outcome);
  return outcome;
}

absl::StatusOr<RunResult> RunOnHost(const RunOptions& options,
                                    const std::string& directory) {
  using namespace sandbox_internal;  // NOLINT: this file's two halves
  if (options.argv.empty()) return absl::InvalidArgumentError("no command");
  ASSIGN_OR_RETURN(Pipe error_pipe, MakePipe());
  Pipe out, err;
  if (options.capture_output) {
    ASSIGN_OR_RETURN(out, MakePipe());
    ASSIGN_OR_RETURN(err, MakePipe());
  }
  // Only SIGTERM and SIGHUP: a host command shares the caller's terminal
  // and group, so Ctrl-C reaches it (and the caller) directly.
  StopSignals signals(/*interrupts=*/false);
  const bool own_group = options.wall_time_ms > 0 || options.cancel_fd >= 0;
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
    // With a wall time or a cancel descriptor, the command leads a process
    // group of its own, so that a timeout or a stop ends what it started in
    // the background too. Without either it stays in the caller's group: an
    // interactive command keeps the terminal.
    if (own_group && ::setpgid(0, 0) != 0) {
      Fail(error_fd, LastErrnoStatus("setpgid"));
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    std::vector<char*> argv = CStrings(options.argv);
    ::execvp(argv[0], argv.data());
    Fail(error_fd, LastErrnoStatus(absl::StrCat("execvp ", argv[0])), 'C');
  }
  error_pipe.write.Reset();
  out.write.Reset();
  err.write.Reset();
  RunResult result;
  SuperviseOptions supervise;
  supervise.wall_ms = options.wall_time_ms;
  supervise.capture_limit = options.capture_limit;
  supervise.signals = &signals;
  supervise.cancel_fd = options.cancel_fd;
  supervise.on_output = options.on_output;
  supervise.kill_group = own_group;
  supervise.tick_ms = options.tick_ms;
  supervise.on_tick = options.on_tick;
  ASSIGN_OR_RETURN(
      Supervised supervised,
      Supervise(child.pid, std::move(child.pidfd), std::move(out.read),
                std::move(err.read), supervise, &result));
  ASSIGN_OR_RETURN(std::string error, ReadAll(error_pipe.read.get()));
  RunResult outcome = error.empty() ? FromWaitStatus(supervised.wait_status)
                                    : RunResult::FailedToStart(error.substr(1));
  if (error.empty() &&
      (supervised.timed_out || supervised.cancelled ||
       signals.Stopped() != 0) &&
      own_group) {
    // The group's leader is dead and reaped, but its pid stays the group's
    // id while any member lives, and cannot be reused for a new group.
    ::kill(-child.pid, SIGKILL);
  }
  if (error.empty() && supervised.timed_out) {
    outcome = RunResult();
    outcome.kind = RunResult::Kind::kTimedOut;
  }
  NoteCancel(supervised, error, &outcome);
  NoteStop(signals.Stopped(), &outcome);
  TakeOutput(std::move(result), &outcome);
  return outcome;
}

}  // namespace garuda
