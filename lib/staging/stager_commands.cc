#include "lib/staging/stager_commands.h"

#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "lib/base/home.h"
#include "lib/base/status_macros.h"
#include "lib/netproxy/session_proxy.h"
#include "lib/policy/merge.h"
#include "lib/staging/job_commands.h"
#include "lib/staging/network_start.h"
#include "lib/staging/session.h"
#include "lib/staging/staged_guard.h"
#include "lib/staging/staged_run.h"
#include "lib/staging/stager_settings.h"
#include "sandbox/command_policy.h"
#include "sandbox/probe.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace {

void Say(const std::string& text) {
  std::fprintf(stderr, "garuda-stager: %s\n", text.c_str());
}

std::string CurrentDirectory() {
  char buffer[PATH_MAX];
  return ::getcwd(buffer, sizeof buffer) ? buffer : "";
}

// The sandbox cannot be used: stop, or run on the host when the person said
// so and no setting requires the sandbox.
int WithoutSandbox(const MergedSettings& settings,
                   const StagerRunOptions& options, const std::string& project,
                   const std::string& reason, const std::string& fix) {
  if (std::optional<SandboxRequirement> required = RequiredSandbox(settings)) {
    Say(absl::StrCat(required->why, ", and it does not work here: ", reason,
                     ".\n  fix: ", fix, "; or ", required->undo, "."));
    if (options.allow_host) {
      Say(absl::StrCat("--allow-host is refused: ", required->why,
                       "; nothing was run."));
    }
    return kStagerRefused;
  }
  if (!options.allow_host) {
    Say(absl::StrCat("no working OS sandbox: ", reason, ".\n  fix: ", fix,
                     ".\n  To run this command on the host WITHOUT a sandbox, "
                     "run again with --allow-host."));
    return kStagerRefused;
  }
  Say(absl::StrCat("running on the host WITHOUT a sandbox (--allow-host): ",
                   reason));
  RunOptions run;
  run.argv = options.argv;
  auto result = RunOnHost(run, project);
  if (!result.ok()) {
    Say(std::string(result.status().message()));
    return kStagerRefused;
  }
  if (result->kind != RunResult::Kind::kExited) Say(result->Describe());
  return result->ShellExitCode();
}

// A process that has ended already (its messages said): no lockdown.
class Ended : public OpenedStager {
 public:
  explicit Ended(int code) : code_(code) {}
  std::optional<Role> role() const override { return std::nullopt; }
  int Serve() override { return code_; }
  int Refuse(const absl::Status&) override { return code_; }

 private:
  int code_;
};

// The guard of a staged run or serve (lib/staging/staged_guard.h).
class Guard : public OpenedStager {
 public:
  Guard(StagedGuard guard, bool raise_deferred)
      : guard_(std::move(guard)), raise_deferred_(raise_deferred) {}
  std::optional<Role> role() const override { return Role::kStagingGuard; }
  RoleNeeds needs() const override { return guard_.Needs(); }
  int Serve() override {
    int code = guard_.Wait();
    if (raise_deferred_) RaiseDeferredStopSignal();  // the view is cleaned up
    return code;
  }
  int Refuse(const absl::Status& why) override { return guard_.Refuse(why); }

 private:
  StagedGuard guard_;
  bool raise_deferred_;
};

// `run --mode staged` in the guard's child.
class StagedRunStep : public OpenedStager {
 public:
  explicit StagedRunStep(std::unique_ptr<StagedRun> run)
      : run_(std::move(run)) {}
  std::optional<Role> role() const override { return Role::kStager; }
  int Serve() override { return run_->Run(); }
  int Refuse(const absl::Status& why) override { return run_->Refuse(why); }

 private:
  std::unique_ptr<StagedRun> run_;
};

// `run --mode direct`, once its policy and its proxy are made.
class DirectRun : public OpenedStager {
 public:
  DirectRun(const StagerRunOptions& options, MergedSettings settings,
            std::string project)
      : options_(options),
        settings_(std::move(settings)),
        project_(std::move(project)) {}

  // The policy and the allow list's proxy; 0, or the exit code.
  int Open(const std::string& cwd, const std::optional<jobs::JobGuard>& job) {
    CommandRequest request;
    request.project = project_;
    request.working_directory = cwd;
    request.network = options_.network;
    request.write_paths = options_.write_paths;
    request.environment = CurrentEnvironment();
    auto policy = DirectCommandPolicy(settings_, request);
    if (!policy.ok()) {
      Say(std::string(policy.status().message()));
      return kStagerRefused;
    }
    policy_ = *std::move(policy);
    if (job) ScopeJobCommand(*job, &policy_);
    policy_.set_keep_processes(options_.keep_processes);
    // The allow list's proxy, started before the lockdown (its own is
    // stricter); --network gives the command all of it instead.
    if (policy_.has_network_proxy()) {
      std::vector<std::string> notices;
      absl::StatusOr<std::unique_ptr<netproxy::SessionProxy>> started =
          StartSessionProxy(settings_, project_, "/proc/self/exe", &notices);
      if (!started.ok()) {
        Say(absl::StrCat(started.status().message(), "; nothing was run"));
        return kStagerRefused;
      }
      proxy_ = *std::move(started);
      for (const std::string& notice : notices) Say(notice);
    }
    return 0;
  }

  // With --allow-host the person lets the command run on the host as
  // themselves should the sandbox fail to set up (known only once it is
  // tried, after a lockdown would already bind this process): no lockdown
  // then, as for every host command.
  std::optional<Role> role() const override {
    if (options_.allow_host) return std::nullopt;
    return Role::kStager;
  }

  int Refuse(const absl::Status& why) override {
    Say(absl::StrCat(why.message(), "; nothing was run"));
    return kStagerRefused;
  }

  int Serve() override {
    RunOptions run;
    run.argv = options_.argv;
    // The program ends right after the run (main's Exit).
    run.return_before_teardown = true;
    std::vector<proxy::NetworkEvent> asked;
    auto result =
        netproxy::RunAttached(proxy_.get(), &run.proxy_handoff_fd, &asked,
                              [&] { return RunInSandbox(policy_, run); });
    // After the command's output: what the proxy refused.
    google::protobuf::RepeatedPtrField<proxy::NetworkEvent> events(
        asked.begin(), asked.end());
    for (const std::string& line : netproxy::RefusalLines(events)) Say(line);
    if (!result.ok()) {
      Say(std::string(result.status().message()));
      return kStagerRefused;
    }
    if (result->kind == RunResult::Kind::kFailedToStart &&
        result->sandbox_failed) {
      std::string reason =
          absl::StrCat("the sandbox could not be set up: ", result->reason);
      std::string fix =
          "run `garuda-stager probe` for what this machine allows";
      if (std::optional<SandboxProblem> problem =
              FirstSandboxProblem(ProbeSandbox(ProbeOptions::Quick()))) {
        absl::StrAppend(&reason, " (", problem->reason, ")");
        fix = problem->fix;
      }
      return WithoutSandbox(settings_, options_, project_, reason, fix);
    }
    if (result->kind != RunResult::Kind::kExited) Say(result->Describe());
    return result->ShellExitCode();
  }

 private:
  const StagerRunOptions& options_;
  MergedSettings settings_;
  std::string project_;
  SandboxPolicy policy_;
  std::unique_ptr<netproxy::SessionProxy> proxy_;
};

// `run --mode staged`: the guard forks; this process is then the guard or
// the run.
std::unique_ptr<OpenedStager> OpenStagedRun(const StagerRunOptions& options,
                                            MergedSettings settings,
                                            const std::string& project,
                                            const std::string& cwd) {
  if (options.keep_processes || options.allow_host) {
    Say("--keep-processes and --allow-host do not apply to --mode staged: "
        "a staged command always runs in the sandbox and ends with "
        "everything it started; nothing was run");
    return std::make_unique<Ended>(kStagerRefused);
  }
  StagedRunRequest staged;
  staged.project = project;
  staged.working_directory = cwd;
  staged.backend = options.backend;
  staged.session = options.session;
  staged.out = options.out;
  staged.network = options.network;
  staged.write_paths = options.write_paths;
  staged.argv = options.argv;
  StagedGuardOptions guard;
  guard.project = project;
  guard.log = Say;
  absl::StatusOr<StagedGuard> forked = StagedGuard::Fork(guard);
  if (!forked.ok()) return std::make_unique<Ended>(kStagerRefused);
  if (forked->is_guard()) {
    return std::make_unique<Guard>(*std::move(forked), true);
  }
  absl::StatusOr<std::unique_ptr<StagedRun>> run =
      StagedRun::Open(std::move(settings), staged);
  if (!run.ok()) return std::make_unique<Ended>(kStagerRefused);
  return std::make_unique<StagedRunStep>(*std::move(run));
}

}  // namespace

std::unique_ptr<OpenedStager> OpenStagerRun(const StagerRunOptions& options) {
  auto refused = [] { return std::make_unique<Ended>(kStagerRefused); };
  if (options.argv.empty()) {
    Say("run: no command; usage: garuda-stager run [--project DIR] --mode "
        "direct [--network] [--write PATH]... [--allow-host] -- CMD [ARGS...]");
    return refused();
  }
  std::string cwd = CurrentDirectory();
  absl::StatusOr<std::string> project = RealProjectRoot(options.project);
  if (!project.ok()) {
    Say(std::string(project.status().message()));
    return refused();
  }
  absl::StatusOr<MergedSettings> settings = LoadProjectSettings(*project);
  if (!settings.ok()) {
    Say(std::string(settings.status().message()));
    return refused();
  }
  // The project settings left out because they would widen what the
  // command may do, said before anything runs (issue 13).
  for (const std::string& notice : settings->notices) Say(notice);
  if (options.network && !settings->allow_list_policy_source.empty()) {
    Say(absl::StrCat(
        "--network is refused: ", settings->allow_list_policy_source,
        " allows commands only the hosts of its "
        "sandbox.allowedDomains; nothing was run"));
    return refused();
  }
  if (options.network && !settings->network_off_policy_source.empty()) {
    Say(absl::StrCat(
        "--network is refused: ", settings->network_off_policy_source,
        " turns the network off for commands; nothing was run"));
    return refused();
  }
  std::string mode = options.mode.empty() ? settings->settings.commands().mode()
                                          : options.mode;
  std::optional<jobs::JobGuard> job;
  if (!options.job_file.empty()) {
    // A job's command (its test command): the scope read here, from the
    // job file; never on the host (no --allow-host, which is then refused
    // with the sandbox's own failure below).
    if (options.allow_host) {
      Say(absl::StrCat("--allow-host is refused with --job: ",
                       jobs::kJobHostRefusal, "; nothing was run"));
      return refused();
    }
    absl::StatusOr<jobs::JobGuard> opened =
        OpenStagerJob(options.job_file, *project,
                      mode.empty() ? "direct" : mode, std::nullopt);
    if (!opened.ok()) {
      Say(absl::StrCat(opened.status().message(), "; nothing was run"));
      return refused();
    }
    job = *std::move(opened);
    mode = "direct";
  }
  if (mode == "staged") {
    return OpenStagedRun(options, *std::move(settings), *project, cwd);
  }
  if (mode != "direct") {
    Say(absl::StrCat("--mode: \"", mode, "\" is not \"direct\" or \"staged\""));
    return refused();
  }
  // The test seam first (it only ever makes things stricter); then the run
  // itself is the check: a sandbox that cannot be set up fails before the
  // command starts, and only then does the probe look for the reason. The
  // seam's answer is said here, before a lockdown (nothing runs in the
  // sandbox; a host run is --allow-host's, which takes none).
  if (PretendingNoSandbox()) {
    std::optional<SandboxProblem> problem =
        FirstSandboxProblem(ProbeSandbox(ProbeOptions::Quick()));
    return std::make_unique<Ended>(WithoutSandbox(
        *settings, options, *project, problem->reason, problem->fix));
  }
  auto direct = std::make_unique<DirectRun>(options, *std::move(settings),
                                            *std::move(project));
  int code = direct->Open(cwd, job);
  if (code != 0) return std::make_unique<Ended>(code);
  return direct;
}

namespace {

// `serve` in the guard's child, or the on_host runner.
class Served : public OpenedStager {
 public:
  Served(std::unique_ptr<StagerServeOptions> options,
         std::unique_ptr<StagerServer> server)
      : options_(std::move(options)), server_(std::move(server)) {}
  // The on_host runner is not locked down: docs/lockdown.md, "The host
  // runner".
  std::optional<Role> role() const override {
    if (options_->mode == kHostRunnerMode) return std::nullopt;
    return Role::kStager;
  }
  int Serve() override { return Done(server_->Serve()); }
  int Refuse(const absl::Status& why) override { return Done(why); }

  static int Done(const absl::Status& served) {
    if (served.ok()) return 0;
    Say(absl::StrCat("serve: ", served.message()));
    return 1;
  }

 private:
  std::unique_ptr<StagerServeOptions> options_;  // the server's
  std::unique_ptr<StagerServer> server_;
};

}  // namespace

std::unique_ptr<OpenedStager> OpenStagerServe(const StagerServeOptions& given) {
  auto options = std::make_unique<StagerServeOptions>(given);
  options->log = Say;
  // The on_host runner has no staging view; a project that cannot be
  // found is said by the serve itself, before anything is made.
  absl::StatusOr<std::string> project = RealProjectRoot(options->project);
  if (options->mode != kHostRunnerMode && project.ok()) {
    // The session's staging view lives in the guard's child, as for `run
    // --mode staged`: a caught signal removes it.
    StagedGuardOptions guard;
    guard.project = *project;
    guard.run_only_fd = options->channel_fd;
    guard.log = Say;
    absl::StatusOr<StagedGuard> forked = StagedGuard::Fork(guard);
    if (!forked.ok()) return std::make_unique<Ended>(kStagerRefused);
    if (forked->is_guard()) {
      return std::make_unique<Guard>(*std::move(forked), false);
    }
  }
  absl::StatusOr<std::unique_ptr<StagerServer>> server =
      StagerServer::Open(*options);
  if (!server.ok()) {
    return std::make_unique<Ended>(Served::Done(server.status()));
  }
  return std::make_unique<Served>(std::move(options), *std::move(server));
}

int StagerEndSession(const std::string& project, const std::string& session) {
  absl::StatusOr<std::string> real = RealProjectRoot(project);
  if (!real.ok()) {
    Say(std::string(real.status().message()));
    return kStagerRefused;
  }
  return EndStagedSession(*real, session);
}

int StagerProbe(bool json) {
  ProbeReport report = ProbeSandbox({});
  std::string text = json ? report.ToJson() + "\n" : report.ToText();
  std::fputs(text.c_str(), stdout);
  return report.SandboxWorks() ? 0 : 1;
}

const char kStagerUsage[] =
    "runs commands for Garuda in an OS sandbox.\n"
    "\n"
    "  garuda-stager run [--project DIR] --mode direct [--network] "
    "[--write PATH]... [--allow-host] [--keep-processes] -- CMD [ARGS...]\n"
    "      run CMD in the sandbox: the project writable, the system "
    "read-only,\n"
    "      .git/hooks and .garuda/ hidden; the exit code is CMD's\n"
    "  garuda-stager run --project WORKTREE --job FILE -- CMD [ARGS...]\n"
    "      a job's command (garuda-agent run): in the sandbox only, the\n"
    "      worktree read-only but for the job file's writeScope\n"
    "  garuda-stager run [--project DIR] --mode staged [--backend B] "
    "[--session NAME] [--out FILE] -- CMD [ARGS...]\n"
    "      run CMD over a staging view of the project (the project stays\n"
    "      read-only); the ChangeSet goes to stdout (or FILE) for\n"
    "      garuda-applier, CMD's output to stderr\n"
    "  garuda-stager serve --channel-fd=N [--project DIR] [--mode M] "
    "[--backend B] [--session-id ID] [--consent rules|terminal|relayed] "
    "[--job FILE]\n"
    "      serve garuda-agent's session channel (proto/stager_service.proto):\n"
    "      DescribeSession, RunCommand (output captured; staged mode: one\n"
    "      staging view for the whole channel, each command's ChangeSet in\n"
    "      a sealed memfd with the reply; on_host only when the stager\n"
    "      itself agrees: the person on the terminal, or an allow rule),\n"
    "      EndSession\n"
    "  garuda-stager end [--project DIR] --session NAME\n"
    "      remove a named session's staging view\n"
    "  garuda-stager proxy --channel-fd=N\n"
    "      the session's network proxy for sandbox.allowedDomains, started by\n"
    "      the stager itself (proto/netproxy_service.proto; docs/network.md)\n"
    "  garuda-stager probe [--json]\n"
    "      what this machine allows (namespaces, overlay, Landlock, seccomp),\n"
    "      with canaries, and the fix for each missing part";

std::vector<std::string> TakeWriteFlags(int* argc, char** argv) {
  std::vector<std::string> paths;
  int out = 1;
  bool flags_done = false;
  for (int i = 1; i < *argc; ++i) {
    if (!flags_done && std::strcmp(argv[i], "--") == 0) flags_done = true;
    if (!flags_done && std::strcmp(argv[i], "--write") == 0 && i + 1 < *argc) {
      paths.push_back(argv[++i]);
      continue;
    }
    if (!flags_done && std::strncmp(argv[i], "--write=", 8) == 0) {
      paths.push_back(argv[i] + 8);
      continue;
    }
    argv[out++] = argv[i];
  }
  *argc = out;
  return paths;
}

void ExitStager(int code) {
  std::fflush(nullptr);
  ::_exit(code);
}

WeakerLockdown StagerWeakerLockdown(const std::string& why,
                                    const std::string& command) {
  return {why, [command](const std::string& line) {
            std::fprintf(stderr, "garuda-stager %s: %s\n", command.c_str(),
                         line.c_str());
          }};
}

absl::Status ServeFlagsUsable(const std::string& consent,
                              const std::string& terminal,
                              StagerServeOptions* options) {
  if (options->channel_fd < 0) {
    return absl::InvalidArgumentError("serve needs --channel-fd");
  }
  ASSIGN_OR_RETURN(options->consent.mode, ParseConsentMode(consent));
  options->consent.terminal = terminal;
  return absl::OkStatus();
}

int StagerUsageError(const absl::Status& status) {
  Say(std::string(status.message()));
  return 2;
}

int StagerFailed(const std::string& command, const absl::Status& status) {
  std::fprintf(stderr, "garuda-stager %s: %s\n", command.c_str(),
               std::string(status.message()).c_str());
  return 1;
}

int StagerUnknownCommand(const std::string& command) {
  if (command.empty()) {
    std::fprintf(stderr, "garuda-stager %s\n(see --help)\n", kStagerUsage);
  } else {
    Say(absl::StrCat("unknown command \"", command,
                     "\" (run, serve, proxy, probe, end)"));
  }
  return 2;
}

}  // namespace garuda
