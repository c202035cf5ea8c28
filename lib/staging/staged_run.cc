#include "lib/staging/staged_run.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/base/visible.h"
#include "lib/changeset/beneath.h"
#include "lib/netproxy/session_proxy.h"
#include "lib/question/question.h"
#include "lib/staging/network_start.h"
#include "lib/staging/staged_guard.h"
#include "sandbox/command_policy.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace {

constexpr int kNotRun = 125;

void Say(const std::string& text) {
  std::fprintf(stderr, "garuda-stager: %s\n", text.c_str());
}

int Stop(const std::string& text) {
  Say(absl::StrCat(text, "\n  ", kNothingRunInstead));
  return kNotRun;
}

absl::Status WriteOut(const ChangeSet& change_set, const std::string& out) {
  // Written unnamed (O_TMPFILE) and named only once whole, so that a run
  // killed while it writes (the guard's SIGKILL after a signal) leaves no
  // temporary behind; a file system without O_TMPFILE gets a named one.
  UniqueFd fd(
      ::open(Dirname(out).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600));
  bool unnamed = fd.valid();
  std::string temporary = absl::StrCat(out, ".tmp-", ::getpid());
  if (!unnamed) {
    ASSIGN_OR_RETURN(fd,
                     OpenFile(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0600));
  }
  absl::Status written = WriteChangeSet(change_set, fd.get(), out);
  if (written.ok() && ::fsync(fd.get()) != 0) {
    written = LastErrnoStatus(absl::StrCat("fsync(", temporary, ")"));
  }
  if (written.ok() && unnamed) {
    // A name left by an earlier run of the same pid that was killed in the
    // step below.
    ::unlink(temporary.c_str());
    std::string self = absl::StrCat("/proc/self/fd/", fd.get());
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, temporary.c_str(),
                 AT_SYMLINK_FOLLOW) != 0) {
      written = LastErrnoStatus(absl::StrCat("linkat(", temporary, ")"));
    }
  }
  fd.Reset();
  if (!written.ok()) {
    if (!unnamed) ::unlink(temporary.c_str());
    return written;
  }
  if (::rename(temporary.c_str(), out.c_str()) != 0) {
    absl::Status status = LastErrnoStatus(absl::StrCat("rename to ", out));
    ::unlink(temporary.c_str());
    return status;
  }
  return absl::OkStatus();
}

// Runs `fn` with the process's stdout pointing at stderr, so that the
// command's output never mixes into the ChangeSet stream.
template <typename Fn>
auto WithStdoutOnStderr(Fn fn) -> decltype(fn()) {
  std::fflush(stdout);
  int saved = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (saved >= 0) ::dup2(2, 1);
  auto result = fn();
  if (saved >= 0) {
    ::dup2(saved, 1);
    ::close(saved);
  }
  return result;
}

// Prints what the run of a staged command left for the person on stderr,
// then writes the list: to --out, to stdout when it is not a terminal, or
// as a summary and diff on a terminal.
absl::Status Output(const StagedRunRequest& request,
                    const ChangeSet& change_set, int conflicts) {
  std::vector<std::string> kept;
  for (const IgnoredCount& count : change_set.summary.ignored()) {
    kept.push_back(absl::StrCat(
        count.folder().empty() ? "./" : VisiblePath(count.folder()), ": ",
        count.files(), count.files() == 1 ? " file" : " files"));
  }
  if (!kept.empty()) {
    Say(absl::StrCat("kept in staging, ignored by git, never applied: ",
                     absl::StrJoin(kept, ", ")));
  }
  if (change_set.NoChanges()) {
    Say("no changes");
  } else {
    Say(absl::StrCat(
        change_set.changes.size(), " changed paths",
        change_set.summary.incomplete()
            ? absl::StrCat(
                  " (incomplete: ", change_set.summary.incomplete_reason(), ")")
            : ""));
  }
  if (conflicts > 0) {
    Say(absl::StrCat(conflicts,
                     " of them also changed in the project during the "
                     "command: applying will report a conflict"));
  }
  if (!OutputPermitted()) {
    return absl::CancelledError(
        "stopped by a signal before the list was written");
  }
  if (!request.out.empty()) return WriteOut(change_set, request.out);
  if (!::isatty(1)) return WriteChangeSet(change_set, 1, "standard output");
  ASSIGN_OR_RETURN(UniqueFd project, OpenRoot(request.project));
  Rendered rendered = RenderChangeSet(change_set, project.get());
  std::string text =
      change_set.NoChanges()
          ? "no changes\n"
          : absl::StrCat(rendered.summary, "\n", rendered.diff, "\n",
                         "(a terminal shows the list only; pipe it to "
                         "garuda-applier apply --ask to apply it)\n");
  return WriteAll(1, text);
}

}  // namespace

absl::StatusOr<std::unique_ptr<StagedRun>> StagedRun::Open(
    MergedSettings given, const StagedRunRequest& request) {
  std::unique_ptr<StagedRun> run(new StagedRun(std::move(given), request));
  const MergedSettings& settings = run->settings_;
  StagedViewOptions options;
  options.project = request.project;
  options.backend = request.backend;
  options.session = request.session;
  options.timings = &run->timings_;
  absl::StatusOr<std::unique_ptr<StagedView>> view =
      StagedView::Open(settings, options);
  if (!view.ok()) return run->Stopped(view.status());
  run->view_ = *std::move(view);
  Say(run->view_->Describe());
  absl::Status entered = run->view_->EnterAndLock();
  if (!entered.ok()) return run->Stopped(entered);
  // The allow list's proxy (docs/network.md), before the lockdown.
  if (!request.network) {
    std::vector<std::string> notices;
    absl::StatusOr<std::unique_ptr<netproxy::SessionProxy>> started =
        StartSessionProxy(settings, request.project, "/proc/self/exe",
                          &notices);
    if (!started.ok()) return run->Stopped(started.status());
    run->proxy_ = *std::move(started);
    for (const std::string& notice : notices) Say(notice);
  }
  return run;
}

StagedRun::StagedRun(MergedSettings settings, const StagedRunRequest& request)
    : settings_(std::move(settings)), request_(request) {}

StagedRun::~StagedRun() = default;

absl::Status StagedRun::Stopped(const absl::Status& why) {
  Stop(std::string(why.message()));
  return why;
}

int StagedRun::Refuse(const absl::Status& why) {
  return Stop(std::string(why.message()));
}

int StagedRun::Run() {
  const MergedSettings& settings = settings_;
  const StagedRunRequest& request = request_;
  StagingTimings& timings = timings_;
  std::unique_ptr<StagedView>* view = &view_;
  std::unique_ptr<netproxy::SessionProxy>& proxy = proxy_;
  int code = kNotRun;
  {
    CommandRequest command;
    command.project = request.project;
    command.working_directory = request.working_directory;
    command.network = request.network;
    command.write_paths = request.write_paths;
    command.environment = CurrentEnvironment();
    RunOptions run;
    run.argv = request.argv;
    // SIGTERM/SIGHUP end the command at once; the one-shot view is removed
    // before the stager meets the signal (the guard's RaiseDeferredStopSignal).
    run.defer_stop_signal = true;
    // The command's output goes to stderr: stdout carries the list.
    std::vector<proxy::NetworkEvent> asked;
    absl::StatusOr<StagedOutcome> outcome = WithStdoutOnStderr([&] {
      return netproxy::RunAttached(
          proxy.get(), &run.proxy_handoff_fd, &asked, [&] {
            return (*view)->Run(settings, command, run, 0,
                                absl::StrJoin(request.argv, " "));
          });
    });
    google::protobuf::RepeatedPtrField<proxy::NetworkEvent> events(
        asked.begin(), asked.end());
    for (const std::string& line : netproxy::RefusalLines(events)) Say(line);
    if (!outcome.ok()) return Stop(std::string(outcome.status().message()));
    if (outcome->result.kind != RunResult::Kind::kExited) {
      Say(outcome->result.Describe());
    }
    absl::Status shown =
        Output(request, outcome->change_set, outcome->conflicts);
    timings.Mark("output");
    if (!shown.ok()) return Stop(std::string(shown.message()));
    code = outcome->result.ShellExitCode();
  }
  // The view is removed (a one-shot's folder) before the end is timed.
  proxy.reset();
  view->reset();
  timings.Mark("end");
  timings.Print();
  return code;
}

}  // namespace garuda
