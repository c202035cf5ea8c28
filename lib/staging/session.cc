#include "lib/staging/session.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/base/visible.h"
#include "lib/changeset/beneath.h"
#include "lib/changeset/builder.h"
#include "lib/question/question.h"
#include "lib/staging/backend.h"
#include "lib/staging/change_clock.h"
#include "lib/staging/folders.h"
#include "lib/staging/mounts.h"
#include "sandbox/command_policy.h"
#include "sandbox/probe.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace {

constexpr char kBackendFile[] = "backend";

void Say(const std::string& text) {
  std::fprintf(stderr, "garuda-stager: %s\n", text.c_str());
}

bool Inside(const std::string& path, const std::string& folder) {
  return path == folder || absl::StartsWith(path, folder + "/");
}

bool NewerThan(const struct stat& st, const struct timespec& t0) {
  const struct timespec& c = st.st_ctim;
  return c.tv_sec > t0.tv_sec ||
         (c.tv_sec == t0.tv_sec && c.tv_nsec >= t0.tv_nsec);
}

// Whether `relative` beneath `root` (or, when it is gone, its nearest
// folder that is still there) changed at or after t0.
bool ChangedSince(const std::string& root, const std::string& relative,
                  const struct timespec& t0) {
  std::string path = JoinPath(root, relative);
  struct stat st;
  while (::lstat(path.c_str(), &st) != 0) {
    if (path == root) return true;  // the root is gone: surely a change
    path = Dirname(path);
  }
  return NewerThan(st, t0);
}

// Whether the command wrote `relative` in the copy: the path, or a folder
// above it (a renamed folder keeps its files' times). A person's edit of a
// file beside one the command wrote is then kept too, and marked as a
// conflict below, never listed as the command's own.
bool WrittenSince(const std::string& root, const std::string& relative,
                  const struct timespec& t0) {
  std::string path = relative;
  while (true) {
    if (ChangedSince(root, path, t0)) return true;
    std::string parent = Dirname(path);
    if (parent == "." || parent.empty() || parent == path) return false;
    path = parent;
  }
}

// The change list says what the command changed, against the project as it
// was before the command. The builders fingerprint the project when the
// list is made; a path the person changed during the command would then
// look like the command's own base. Such a path gets a base that matches
// nothing, so garuda-applier reports a conflict and applies nothing. A copy
// also differs from the project where only the person wrote: those paths
// are not the command's changes and are left out.
void KeepCommandChanges(ChangeSet* change_set, const std::string& project,
                        const std::string& listed_root, bool copy,
                        const struct timespec& t0, int* conflicts) {
  std::vector<Change> kept;
  for (Change& change : change_set->changes) {
    const std::string& path = change.entry.path();
    if (copy && !WrittenSince(listed_root, path, t0)) continue;
    if (ChangedSince(project, path, t0)) {
      Fingerprint changed;
      changed.set_type(FILE_TYPE_UNSPECIFIED);
      *change.entry.mutable_base() = changed;
      ++*conflicts;
    }
    kept.push_back(std::move(change));
  }
  change_set->changes = std::move(kept);
}

// The project paths denied to commands (.garuda, .git/hooks, the
// settings' own): in direct mode the sandbox hides them; in staged mode a
// command can still create one in its view when the project has none, so a
// change there is refused, and the whole list with it.
void RefuseDeniedPaths(ChangeSet* change_set, const SandboxPolicy& policy) {
  std::vector<Change> kept;
  for (Change& change : change_set->changes) {
    const std::string& path = change.entry.path();
    std::string denied;
    for (const std::string& given : policy.denied_paths()) {
      if (!given.empty() && given[0] != '/' && Inside(path, given)) {
        denied = given;
      }
    }
    if (denied.empty()) {
      kept.push_back(std::move(change));
      continue;
    }
    RefusedPath* refused = change_set->summary.add_refused();
    refused->set_path(path);
    refused->set_reason(
        absl::StrCat(denied,
                     " is denied to commands; a change there is "
                     "never applied"));
  }
  change_set->changes = std::move(kept);
}

// When this environment variable is "1", the stager prints how long each
// phase took on stderr (for bench/staging/).
constexpr char kTimingsVariable[] = "GARUDA_STAGER_TIMINGS";

}  // namespace

StagingTimings::StagingTimings() : last_(absl::Now()) {}

void StagingTimings::Mark(const char* phase) {
  absl::Time now = absl::Now();
  phases_.push_back(
      absl::StrCat(phase, "=", absl::ToDoubleMilliseconds(now - last_), "ms"));
  last_ = now;
}

void StagingTimings::Print() const {
  const char* on = std::getenv(kTimingsVariable);
  if (on != nullptr && std::string(on) == "1") {
    Say(absl::StrCat("timings: ", absl::StrJoin(phases_, " ")));
  }
}

absl::StatusOr<std::unique_ptr<StagedView>> StagedView::Open(
    const MergedSettings& settings, const StagedViewOptions& options) {
  std::unique_ptr<StagedView> view(new StagedView(options));
  RETURN_IF_ERROR(view->Make(settings));
  if (options.serves_several) view->backend_->ServeSeveralCommands();
  return view;
}

StagedView::~StagedView() {
  if (mounting_ahead_.joinable()) mounting_ahead_.join();
  if (backend_) backend_->Unmount();
  if (!folder_.path.empty() && remove_at_end_) {
    absl::Status removed = RemoveTree(folder_.path);
    if (!removed.ok()) {
      Say(absl::StrCat("could not remove the staging folder: ",
                       removed.message()));
    }
  }
}

absl::Status StagedView::Make(const MergedSettings& settings) {
  const std::string& project = options_.project;
  const std::string& session = options_.session;
  std::string wanted = options_.backend.empty()
                           ? settings.settings.commands().backend()
                           : options_.backend;
  if (wanted.empty()) wanted = "auto";
  if (wanted != "auto" && wanted != "overlay" && wanted != "copy") {
    return absl::InvalidArgumentError(absl::StrCat(
        "backend \"", wanted, "\" is not \"auto\", \"overlay\" or \"copy\""));
  }
  absl::StatusOr<std::string> root = StagingRoot();
  if (!root.ok()) {
    return absl::Status(root.status().code(),
                        absl::StrCat("cannot make the staging folder: ",
                                     root.status().message()));
  }
  if (Inside(*root, project) || Inside(project, *root)) {
    return absl::FailedPreconditionError(
        absl::StrCat("the staging folder ", *root, " and the project ", project,
                     " overlap; use a project outside ~/.garuda that does "
                     "not hold it"));
  }
  absl::Status cleaned = RemoveEndedFolders(*root, project);
  if (!cleaned.ok()) {
    Say(absl::StrCat("left over staging folders stay: ", cleaned.message()));
  }
  absl::StatusOr<StagingFolder> folder =
      OpenStagingFolder(*root, project, session);
  if (!folder.ok()) {
    return absl::Status(folder.status().code(),
                        absl::StrCat("cannot make the staging folder: ",
                                     folder.status().message()));
  }
  folder_ = *std::move(folder);
  remove_at_end_ = !folder_.named;
  std::string backend_file = JoinPath(folder_.path, kBackendFile);
  if (!folder_.fresh) {
    absl::StatusOr<std::string> stored = ReadFileToString(backend_file);
    if (!stored.ok()) {
      // A session whose start failed half way: start it again.
      folder_.fresh = true;
    } else {
      kind_ = *stored;
      if (wanted != "auto" && wanted != kind_) {
        return absl::FailedPreconditionError(absl::StrCat(
            "session \"", session, "\" uses the ", kind_, " backend, not ",
            wanted, "; end it first with garuda-stager end --session ",
            session));
      }
    }
  }
  if (!folder_.fresh) {
    backend_ = MakeStagingBackend(kind_, project, folder_.path);
    if (!backend_) {
      return absl::FailedPreconditionError(
          absl::StrCat("session folder ", folder_.path,
                       " names an unknown backend \"", kind_, "\""));
    }
    return absl::OkStatus();
  }
  // A new view: the sandbox must work before anything is copied or
  // mounted. A view that exists was made with a working sandbox; should it
  // stop working, the command fails to start with the reason (never runs
  // another way), so later calls skip this probe.
  ProbeReport own;
  const ProbeReport* report = options_.probe;
  if (report == nullptr) {
    // One quick probe. For "auto" its namespace child also mounts an
    // overlay: the one answer of a full probe that "auto" reads. The full
    // probe's canaries and cgroups (real sandboxes started and checked)
    // would decide nothing more here: a sandbox that cannot be set up
    // fails the command's start with the reason either way.
    ProbeOptions probe = ProbeOptions::Quick();
    probe.overlay = wanted == "auto";
    own = ProbeSandbox(probe);
    report = &own;
  }
  if (const ProbeFeature* missing = report->FirstMissing()) {
    remove_at_end_ = true;  // the new folder holds nothing yet
    return absl::FailedPreconditionError(absl::StrCat(
        "staged mode needs the OS sandbox, and it does not work here: ",
        missing->name, ": ", missing->reason, ".\n  fix: ", missing->fix));
  }
  kind_ = wanted;
  if (wanted == "auto") kind_ = report->OverlayWorks() ? "overlay" : "copy";
  backend_ = MakeStagingBackend(kind_, project, folder_.path);
  absl::Status made = absl::OkStatus();
  const char* fail = std::getenv(kFailStagingVariable);
  if (fail != nullptr && std::string(fail) == "1") {
    made = absl::FailedPreconditionError(absl::StrCat(
        "pretended by ", kFailStagingVariable, "=1 (a test seam)"));
  }
  if (made.ok()) made = backend_->Create();
  if (made.ok() && folder_.named) {
    made = WriteFileAtomically(backend_file, kind_, 0600);
  }
  if (!made.ok()) {
    remove_at_end_ = true;
    backend_.reset();
    return absl::Status(
        made.code(),
        absl::StrCat("the staging view (", kind_,
                     " backend) could not be set up: ", made.message()));
  }
  up_to_date_ = true;
  return absl::OkStatus();
}

std::string StagedView::Describe() const {
  return absl::StrCat(
      "staged mode, ", kind_, " backend: ", backend_->Describe(),
      folder_.named ? absl::StrCat(" (session \"", options_.session, "\")")
                    : " (one shot)");
}

absl::Status StagedView::ViewFailed(const absl::Status& status) const {
  std::string end =
      folder_.named
          ? absl::StrCat("; end the session with garuda-stager end --session ",
                         options_.session, " and start again")
          : "";
  return absl::Status(
      status.code(),
      absl::StrCat("the staging view failed: ", status.message(), end));
}

absl::Status StagedView::EnterAndLock() {
  absl::Status entered = EnterStagingNamespaces();
  if (!entered.ok()) return ViewFailed(entered);
  // From here on the project is read-only for this process and for every
  // process it starts; the view is the only writable copy.
  absl::Status locked = BindReadOnlyOverItself(options_.project);
  if (!locked.ok()) return ViewFailed(locked);
  return absl::OkStatus();
}

absl::StatusOr<SandboxPolicy> StagedView::PolicyOver(
    const MergedSettings& settings, const CommandRequest& request,
    const std::string& view) {
  ASSIGN_OR_RETURN(SandboxPolicy policy,
                   DirectCommandPolicy(settings, request));
  policy.set_project_writable(false);
  BindMount* bind = policy.add_binds();
  bind->set_source(view);
  bind->set_target(request.project);
  bind->set_writable(true);
  return policy;
}

absl::StatusOr<SandboxPolicy> StagedView::MountedPolicy(
    const MergedSettings& settings, const CommandRequest& request) {
  absl::StatusOr<std::string> view = backend_->Mount();
  if (!view.ok()) return ViewFailed(view.status());
  return PolicyOver(settings, request, *view);
}

absl::StatusOr<ChangeSet> StagedView::ListWrittenSince(
    const SandboxPolicy& policy, const std::string& shown_command,
    const struct timespec& t0, bool only_written, int* conflicts) {
  BuildOptions options;
  options.project = policy.project();
  options.command = shown_command;
  // The test seam for an incomplete list: a lower file limit can only
  // make a list incomplete, which garuda-applier never applies.
  const char* limit = std::getenv(kFileLimitVariable);
  uint64_t lower = 0;
  if (limit != nullptr && absl::SimpleAtoi(limit, &lower) &&
      lower < options.file_limit) {
    options.file_limit = lower;
  }
  absl::StatusOr<ChangeSet> change_set = backend_->List(options);
  if (!change_set.ok()) {
    return absl::Status(change_set.status().code(),
                        absl::StrCat("the change list could not be made: ",
                                     change_set.status().message()));
  }
  RefuseDeniedPaths(&*change_set, policy);
  KeepCommandChanges(&*change_set, policy.project(), backend_->ListedRoot(),
                     only_written, t0, conflicts);
  return change_set;
}

absl::StatusOr<StagedOutcome> StagedView::Run(
    const MergedSettings& settings, const CommandRequest& request,
    const RunOptions& run, uint64_t wall_time_ms,
    const std::string& shown_command) {
  StagingTimings unused;
  StagingTimings* timings =
      options_.timings != nullptr ? options_.timings : &unused;
  timings->Mark("start");
  // A view mounted ahead after the last command (MountAheadForNext) is
  // this command's, as it was made: nothing has written its layers since.
  bool mounted_ahead = false;
  if (mounting_ahead_.joinable()) {
    mounting_ahead_.join();
    mounted_ahead = true;
  }
  if (!mounted_ahead) {
    // Overlay's layers are changed only while nothing has them mounted, as
    // overlayfs requires: the view is mounted for one command at a time.
    backend_->Unmount();
    if (!up_to_date_) {
      absl::Status refreshed = backend_->Refresh();
      if (!refreshed.ok()) return ViewFailed(refreshed);
    }
  }
  up_to_date_ = false;
  timings->Mark("refresh");
  // The line after the refresh's own writes to the view; the command's
  // process starts once the coarse clock has passed it (PID 1 waits), so
  // that the wait overlaps the mount and the sandbox's setup.
  RunOptions started_after_line = run;
  const struct timespec t0 =
      CommandStartLineUnwaited(&started_after_line.start_after_coarse_ns);
  absl::StatusOr<std::string> view =
      mounted_ahead ? std::move(mounted_ahead_) : backend_->Mount();
  if (!view.ok()) return ViewFailed(view.status());

  ASSIGN_OR_RETURN(SandboxPolicy policy, PolicyOver(settings, request, *view));
  LowerWallTime(wall_time_ms, &policy);

  StagedOutcome outcome;
  ASSIGN_OR_RETURN(outcome.result, RunInSandbox(policy, started_after_line));
  if (outcome.result.kind == RunResult::Kind::kFailedToStart) {
    return absl::FailedPreconditionError(
        absl::StrCat("the command did not start: ", outcome.result.reason));
  }
  timings->Mark("command");
  ASSIGN_OR_RETURN(outcome.change_set,
                   ListWrittenSince(policy, shown_command, t0,
                                    /*only_written=*/backend_->name() == "copy",
                                    &outcome.conflicts));
  if (outcome.result.kind != RunResult::Kind::kExited) {
    outcome.change_set.header.set_ended_early(outcome.result.DescribeKind());
  }
  timings->Mark("list");
  // garuda-stager serve: one line per command (GARUDA_STAGER_TIMINGS=1).
  if (timings == &unused) unused.Print();
  MountAheadForNext();
  return outcome;
}

void StagedView::MountAheadForNext() {
  // Only for a view that serves several commands, and only when there is
  // nothing to refresh: a refresh reads the project's ignore rules, which
  // may change before the next command. Nothing writes the layers until
  // then (every process of a command ends with it), and a new mount that
  // nothing has looked into caches nothing of the project: the next
  // command finds it as it would a mount made at its start. The unmount
  // and the mount (1 to 7 ms here) then run while the reply goes out.
  if (!options_.serves_several || !backend_->NothingToRefresh()) return;
  mounting_ahead_ = std::thread([this] {
    backend_->Unmount();
    mounted_ahead_ = backend_->Mount();
  });
}

int EndStagedSession(const std::string& project, const std::string& session) {
  absl::Status name = CheckSessionName(session);
  if (!name.ok()) {
    Say(std::string(name.message()));
    return 2;
  }
  absl::StatusOr<std::string> root = StagingRoot();
  if (!root.ok()) {
    Say(std::string(root.status().message()));
    return 1;
  }
  absl::StatusOr<StagingFolder> folder =
      OpenStagingFolder(*root, project, session);
  if (!folder.ok()) {
    Say(std::string(folder.status().message()));
    return 1;
  }
  if (folder->fresh) {
    RemoveTree(folder->path).IgnoreError();
    Say(absl::StrCat("no session \"", session, "\" for ", project));
    return 1;
  }
  absl::Status removed = RemoveTree(folder->path);
  if (!removed.ok()) {
    Say(std::string(removed.message()));
    return 1;
  }
  Say(absl::StrCat("session \"", session,
                   "\" ended; its staging view is gone"));
  return 0;
}

}  // namespace garuda
