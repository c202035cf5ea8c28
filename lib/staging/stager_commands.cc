#include "lib/staging/stager_commands.h"

#include <limits.h>
#include <unistd.h>

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "lib/base/home.h"
#include "lib/policy/merge.h"
#include "lib/netproxy/session_proxy.h"
#include "lib/staging/job_commands.h"
#include "lib/staging/network_start.h"
#include "lib/staging/session.h"
#include "lib/staging/staged_guard.h"
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

}  // namespace

int StagerRun(const StagerRunOptions& options) {
  if (options.argv.empty()) {
    Say("run: no command; usage: garuda-stager run [--project DIR] --mode "
        "direct [--network] [--write PATH]... [--allow-host] -- CMD [ARGS...]");
    return kStagerRefused;
  }
  std::string cwd = CurrentDirectory();
  absl::StatusOr<std::string> project = RealProjectRoot(options.project);
  if (!project.ok()) {
    Say(std::string(project.status().message()));
    return kStagerRefused;
  }
  absl::StatusOr<MergedSettings> settings = LoadProjectSettings(*project);
  if (!settings.ok()) {
    Say(std::string(settings.status().message()));
    return kStagerRefused;
  }
  // The project settings left out because they would widen what the
  // command may do, said before anything runs (issue 13).
  for (const std::string& notice : settings->notices) Say(notice);
  if (options.network && !settings->allow_list_policy_source.empty()) {
    Say(absl::StrCat("--network is refused: ",
                     settings->allow_list_policy_source,
                     " allows commands only the hosts of its "
                     "sandbox.allowedDomains; nothing was run"));
    return kStagerRefused;
  }
  if (options.network && !settings->network_off_policy_source.empty()) {
    Say(absl::StrCat(
        "--network is refused: ", settings->network_off_policy_source,
        " turns the network off for commands; nothing was run"));
    return kStagerRefused;
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
      return kStagerRefused;
    }
    absl::StatusOr<jobs::JobGuard> opened = OpenStagerJob(
        options.job_file, *project, mode.empty() ? "direct" : mode,
        std::nullopt);
    if (!opened.ok()) {
      Say(absl::StrCat(opened.status().message(), "; nothing was run"));
      return kStagerRefused;
    }
    job = *std::move(opened);
    mode = "direct";
  }
  if (mode == "staged") {
    if (options.keep_processes || options.allow_host) {
      Say("--keep-processes and --allow-host do not apply to --mode staged: "
          "a staged command always runs in the sandbox and ends with "
          "everything it started; nothing was run");
      return kStagerRefused;
    }
    StagedRunRequest staged;
    staged.project = *project;
    staged.working_directory = cwd;
    staged.backend = options.backend;
    staged.session = options.session;
    staged.out = options.out;
    staged.network = options.network;
    staged.write_paths = options.write_paths;
    staged.argv = options.argv;
    staged.lock_down = options.lock_down;
    staged.guard_lock_down = options.guard_lock_down;
    int code = RunStagedCommand(*settings, staged);
    RaiseDeferredStopSignal();  // after the staging view is cleaned up
    return code;
  }
  if (mode != "direct") {
    Say(absl::StrCat("--mode: \"", mode, "\" is not \"direct\" or \"staged\""));
    return kStagerRefused;
  }

  // The test seam first (it only ever makes things stricter); then the run
  // itself is the check: a sandbox that cannot be set up fails before the
  // command starts, and only then does the probe look for the reason.
  if (PretendingNoSandbox()) {
    ProbeOptions quick;
    quick.full = false;
    std::optional<SandboxProblem> problem =
        FirstSandboxProblem(ProbeSandbox(quick));
    return WithoutSandbox(*settings, options, *project, problem->reason,
                          problem->fix);
  }

  CommandRequest request;
  request.project = *project;
  request.working_directory = cwd;
  request.network = options.network;
  request.write_paths = options.write_paths;
  request.environment = CurrentEnvironment();
  auto policy = DirectCommandPolicy(*settings, request);
  if (!policy.ok()) {
    Say(std::string(policy.status().message()));
    return kStagerRefused;
  }
  if (job) ScopeJobCommand(*job, &*policy);
  policy->set_keep_processes(options.keep_processes);
  // The allow list's proxy, started before the lockdown (its own is
  // stricter); --network gives the command all of it instead.
  std::unique_ptr<netproxy::SessionProxy> proxy;
  if (policy->has_network_proxy()) {
    std::vector<std::string> notices;
    absl::StatusOr<std::unique_ptr<netproxy::SessionProxy>> started =
        StartSessionProxy(*settings, *project, "/proc/self/exe", &notices);
    if (!started.ok()) {
      Say(absl::StrCat(started.status().message(), "; nothing was run"));
      return kStagerRefused;
    }
    proxy = *std::move(started);
    for (const std::string& notice : notices) Say(notice);
  }
  // With --allow-host the person lets the command run on the host as
  // themselves should the sandbox fail to set up (known only once it is
  // tried, after a lockdown would already bind this process): no lockdown
  // then, as for every host command.
  absl::Status locked =
      options.allow_host
          ? absl::OkStatus()
          : RequireLockDown(options.lock_down, {}, "garuda-stager run")
                .status();
  if (!locked.ok()) {
    Say(absl::StrCat(locked.message(), "; nothing was run"));
    return kStagerRefused;
  }
  RunOptions run;
  run.argv = options.argv;
  // The program ends right after the run (main's Exit).
  run.return_before_teardown = true;
  std::vector<proxy::NetworkEvent> asked;
  auto result =
      netproxy::RunAttached(proxy.get(), &run.proxy_handoff_fd, &asked,
                            [&] { return RunInSandbox(*policy, run); });
  // After the command's output: what the proxy refused.
  google::protobuf::RepeatedPtrField<proxy::NetworkEvent> events(asked.begin(),
                                                                 asked.end());
  for (const std::string& line : netproxy::RefusalLines(events)) Say(line);
  if (!result.ok()) {
    Say(std::string(result.status().message()));
    return kStagerRefused;
  }
  if (result->kind == RunResult::Kind::kFailedToStart &&
      result->sandbox_failed) {
    std::string reason =
        absl::StrCat("the sandbox could not be set up: ", result->reason);
    std::string fix = "run `garuda-stager probe` for what this machine allows";
    ProbeOptions quick;
    quick.full = false;
    if (std::optional<SandboxProblem> problem =
            FirstSandboxProblem(ProbeSandbox(quick))) {
      absl::StrAppend(&reason, " (", problem->reason, ")");
      fix = problem->fix;
    }
    return WithoutSandbox(*settings, options, *project, reason, fix);
  }
  if (result->kind != RunResult::Kind::kExited) Say(result->Describe());
  return result->ShellExitCode();
}

int StagerServe(StagerServeOptions options) {
  options.log = Say;
  auto serve = [&options] {
    absl::Status served = RunStagerServe(options);
    if (!served.ok()) {
      Say(absl::StrCat("serve: ", served.message()));
      return 1;
    }
    return 0;
  };
  // The on_host runner has no staging view; a project that cannot be
  // found is said by the serve itself, before anything is made.
  absl::StatusOr<std::string> project = RealProjectRoot(options.project);
  if (options.mode == "host" || !project.ok()) return serve();
  // The session's staging view lives in the guard's child, as for `run
  // --mode staged`: a caught signal removes it.
  StagedGuardOptions guard;
  guard.project = *project;
  guard.run_only_fd = options.channel_fd;
  guard.lock_down = options.guard_lock_down;
  guard.log = Say;
  return RunStagedGuarded(guard, serve);
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

}  // namespace garuda
