#include "lib/staging/staged_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/staging/folders.h"

namespace garuda {
namespace {

constexpr int kNotRun = 125;
constexpr int kCaught[] = {SIGTERM, SIGHUP, SIGINT};

void Log(const StagedGuardOptions& options, const std::string& line) {
  if (options.log) options.log(line);
}

// The processes this one is the parent of (its own children and the
// orphans it adopted as a subreaper). Empty when the kernel does not list
// them (no CONFIG_PROC_CHILDREN): the waits below then rely on
// PR_SET_PDEATHSIG alone.
std::vector<pid_t> Children() {
  std::vector<pid_t> pids;
  absl::StatusOr<std::string> text = ReadFileToString(
      absl::StrCat("/proc/self/task/", ::getpid(), "/children"));
  if (!text.ok()) return pids;
  for (absl::string_view word :
       absl::StrSplit(*text, ' ', absl::SkipWhitespace())) {
    int pid = 0;
    if (absl::SimpleAtoi(word, &pid) && pid > 0) pids.push_back(pid);
  }
  return pids;
}

// Kills and waits for every process below this one, until none is left:
// the run, its copy workers, the sandbox's PID 1 (whose namespace dies with
// it) and anything orphaned on the way, which this subreaper adopts. After
// this nothing can write into a staging folder any more. Safe: these are
// all processes this one started or adopted, and a pid stays ours until we
// reap it, so no unrelated process can be hit.
void KillAndWaitForAll() {
  for (;;) {
    for (pid_t pid : Children()) ::kill(pid, SIGKILL);
    pid_t ended = ::waitpid(-1, nullptr, 0);
    if (ended < 0 && errno == EINTR) continue;
    if (ended < 0) return;  // ECHILD: nothing left
  }
}

// `root`: the staging root, found before the lockdown (empty: there is
// none, so the run made no folder).
// `run`: the guard's child, reaped already (0: none was started).
void RemoveLeftovers(const StagedGuardOptions& options, const std::string& root,
                     pid_t run) {
  absl::Status removed = root.empty()
                             ? absl::OkStatus()
                             : RemoveEndedFolders(root, options.project, run);
  if (!removed.ok()) {
    Log(options, absl::StrCat("the staging folder could not be removed: ",
                              removed.message(),
                              " (the next start for the project removes it)"));
  }
}

// The run's side of the output permit (OutputPermitted): it writes a byte
// on `request` and reads the guard's answer on `answer`. -1: no guard.
int permit_request = -1;
int permit_answer = -1;

[[noreturn]] void EndBy(int sig) {
  std::fflush(nullptr);
  ::signal(sig, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(sig);
  ::_exit(128 + sig);  // not reached: the signal's default action ends us
}

}  // namespace

bool OutputPermitted() {
  if (permit_request < 0) return true;
  const char ask = '?';
  while (::write(permit_request, &ask, 1) < 0) {
    if (errno != EINTR) return false;
  }
  char answer = 0;
  ssize_t got;
  while ((got = ::read(permit_answer, &answer, 1)) < 0 && errno == EINTR) {
  }
  // No answer (the guard is gone, or ends the run for a signal): write
  // nothing.
  return got == 1 && answer == 'y';
}

absl::StatusOr<StagedGuard> StagedGuard::Fork(
    const StagedGuardOptions& options) {
  StagedGuard guard;
  guard.options_ = options;
  sigset_t caught;
  sigemptyset(&caught);
  for (int sig : kCaught) {
    struct sigaction current = {};
    ::sigaction(sig, nullptr, &current);
    if (current.sa_handler != SIG_IGN) sigaddset(&caught, sig);
  }
  // SIGCHLD too, so that the guard learns of the run's end and reaps what
  // it adopts (an on_host command's background process that ends) as it
  // goes. At its default, so that children are not reaped behind our back.
  ::signal(SIGCHLD, SIG_DFL);
  sigset_t watched = caught;
  sigaddset(&watched, SIGCHLD);
  sigset_t& previous = guard.previous_mask_;
  ::sigprocmask(SIG_BLOCK, &watched, &previous);
  // Before the run starts: the mask back as it was, and why, for the person.
  auto not_run = [&](const std::string& what, const absl::Status& status) {
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    Log(options, absl::StrCat(what, status.message(), "; nothing was run"));
    return absl::Status(status.code(), absl::StrCat(what, status.message()));
  };
  guard.signals_ = UniqueFd(::signalfd(-1, &watched, SFD_CLOEXEC));
  if (!guard.signals_) {
    return not_run("cannot guard the staged run: ",
                   LastErrnoStatus("signalfd"));
  }
  // Safe: as a subreaper this process adopts only its own orphaned
  // descendants (the copy workers, the sandbox's PID 1), so that it can
  // wait for them before it removes the folder they write.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  // Made now, before the run and the guard's lockdown; when it cannot be
  // made the run says why, and has made no folder.
  absl::StatusOr<std::string> staging_root = StagingRoot();
  guard.root_ = staging_root.ok() ? *staging_root : "";
  // The output permit: the run asks on one pipe before it writes its list,
  // the guard answers on the other.
  int request_ends[2], answer_ends[2];
  if (::pipe2(request_ends, O_CLOEXEC) != 0) {
    return not_run("cannot guard the staged run: ", LastErrnoStatus("pipe2"));
  }
  UniqueFd request_read(request_ends[0]), request_write(request_ends[1]);
  if (::pipe2(answer_ends, O_CLOEXEC) != 0) {
    return not_run("cannot guard the staged run: ", LastErrnoStatus("pipe2"));
  }
  UniqueFd answer_read(answer_ends[0]), answer_write(answer_ends[1]);
  std::fflush(nullptr);
  pid_t parent = ::getpid();
  guard.child_ = ::fork();
  if (guard.child_ < 0) {
    return not_run("cannot start the staged run: ",
                   LastErrnoStatus("fork the staged run"));
  }
  if (guard.child_ == 0) {
    // The run never outlives its guard: a guard killed by SIGKILL takes the
    // run, its workers and its sandbox with it (their PR_SET_PDEATHSIG).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(kNotRun);
    guard.signals_.Reset();
    request_read.Reset();
    answer_write.Reset();
    permit_request = request_write.Release();
    permit_answer = answer_read.Release();
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    return guard;
  }
  request_write.Reset();
  answer_read.Reset();
  guard.request_read_ = std::move(request_read);
  guard.answer_write_ = std::move(answer_write);
  if (options.run_only_fd >= 0) ::close(options.run_only_fd);
  return guard;
}

RoleNeeds StagedGuard::Needs() const {
  // Not the folder of --out: it may hold the project. The run writes its
  // list there unnamed until it is whole (staged_run.cc's WriteOut). No root:
  // no writable path, which the role refuses (nothing to confine it to).
  RoleNeeds needs;
  if (!root_.empty()) needs.writable_paths = {root_};
  return needs;
}

int StagedGuard::Refuse(const absl::Status& why) {
  Log(options_, absl::StrCat("the staged run stops: ", why.message()));
  KillAndWaitForAll();
  RemoveLeftovers(options_, root_, child_);
  return kNotRun;
}

int StagedGuard::Wait() {
  const StagedGuardOptions& options = options_;
  const std::string& root = root_;
  const pid_t child = child_;
  UniqueFd& signals = signals_;
  UniqueFd& request_read = request_read_;
  UniqueFd& answer_write = answer_write_;
  int wait_status = 0;
  bool output_permitted = false;
  for (bool run_ended = false; !run_ended;) {
    // A signal is always taken before the run's request to write its list:
    // a signal sent to the whole group (a terminal's Ctrl-C) reaches the
    // guard's queue when it reaches the command, so before the run can have
    // seen the command end and asked; it then ends the run with nothing
    // written, however the two processes were scheduled.
    struct pollfd ready[2] = {{signals.get(), POLLIN, 0},
                              {request_read.get(), POLLIN, 0}};
    const int watching = request_read ? 2 : 1;
    if (::poll(ready, watching, -1) < 0 && errno != EINTR) {
      Log(options, absl::StrCat("the staged run stops: ",
                                LastErrnoStatus("poll").message()));
      KillAndWaitForAll();
      RemoveLeftovers(options, root, child);
      return kNotRun;
    }
    if (ready[0].revents == 0 && watching == 2 && ready[1].revents != 0) {
      char ask;
      if (::read(request_read.get(), &ask, 1) == 1) {
        const char yes = 'y';
        output_permitted = ::write(answer_write.get(), &yes, 1) == 1;
      } else {
        request_read.Reset();  // the run closed it: it asks no more
      }
      continue;
    }
    if (ready[0].revents == 0) continue;
    struct signalfd_siginfo info = {};
    ssize_t got = ::read(signals.get(), &info, sizeof info);
    if (got < 0 && errno == EINTR) continue;
    if (got != sizeof info) {
      Log(options, absl::StrCat("the staged run stops: ",
                                LastErrnoStatus("read(signalfd)").message()));
      KillAndWaitForAll();
      RemoveLeftovers(options, root, child);
      return kNotRun;
    }
    int sig = static_cast<int>(info.ssi_signo);
    if (sig == SIGCHLD) {
      // Signals of one kind merge: reap every child that has ended.
      int status = 0;
      for (pid_t ended; (ended = ::waitpid(-1, &status, WNOHANG)) > 0;) {
        if (ended == child) {
          wait_status = status;
          run_ended = true;
        }
      }
      continue;
    }
    // The run is killed, not asked: whatever it was doing (copying, running
    // the command, listing) ends now, and the cleanup below is the one that
    // counts.
    ::kill(child, SIGKILL);
    KillAndWaitForAll();
    RemoveLeftovers(options, root, child);
    Log(options, absl::StrCat("stopped by SIG", ::sigabbrev_np(sig),
                              "; the staging view was removed, ",
                              output_permitted
                                  ? "the list was cut off while it was written"
                                  : "nothing was listed"));
    EndBy(sig);
  }
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  int sig = WTERMSIG(wait_status);
  KillAndWaitForAll();
  RemoveLeftovers(options, root, child);
  Log(options, absl::StrCat("the staged run ended by SIG", ::sigabbrev_np(sig),
                            "; its staging view was removed"));
  return kNotRun;
}

}  // namespace garuda
