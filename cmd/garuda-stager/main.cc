// garuda-stager: runs commands for Garuda in an OS sandbox, and says what
// this machine's sandbox can do.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "lib/base/flags.h"
#include "lib/lockdown/roles.h"
#include "lib/netproxy/proxy_service.h"
#include "lib/staging/stager_commands.h"

ABSL_FLAG(std::string, project, "",
          "run, serve, end: the project folder (default: the current folder)");
ABSL_FLAG(
    std::string, mode, "",
    "run, serve: \"direct\" (the command writes the project from inside the "
    "sandbox) or \"staged\" (it writes a staging view; its changes "
    "come out as a ChangeSet); default from the settings");
ABSL_FLAG(std::string, backend, "",
          "run --mode staged, serve: \"auto\", \"overlay\" or \"copy\"; "
          "default "
          "from the settings, else auto");
ABSL_FLAG(std::string, session, "",
          "run --mode staged, end: keep the staging view under this name "
          "across calls (without it: one shot)");
ABSL_FLAG(std::string, out, "",
          "run --mode staged: write the ChangeSet to this file");
ABSL_FLAG(bool, network, false, "run: allow the network");
ABSL_FLAG(std::vector<std::string>, write, {},
          "run: an extra writable path; repeat the flag for more");
ABSL_FLAG(bool, allow_host, false,
          "run: without a working sandbox, run on the host (refused by the "
          "strict profile)");
ABSL_FLAG(bool, keep_processes, false,
          "run: processes the command leaves behind keep running until they "
          "end (dev servers); without it they end with the command");
ABSL_FLAG(std::string, job, "",
          "run, serve: a job's command (T6): read this job file and run "
          "only in the sandbox, direct mode, with the worktree read-only but "
          "for the job's writeScope; nothing on the host");
ABSL_FLAG(bool, json, false, "probe: print one JSON object");
ABSL_FLAG(bool, quiet, false,
          "serve: no \"serving\" line on stderr (errors are still printed)");
ABSL_FLAG(
    int, channel_fd, -1,
    "serve, proxy: the descriptor of garuda-agent's channel (one end of a "
    "Unix stream socketpair)");
ABSL_FLAG(std::string, consent, "rules",
          "serve: who agrees to an on_host command: \"rules\" (only an allow "
          "rule of the settings), \"terminal\" (ask the person on --terminal) "
          "or \"relayed\" (the agent relays the answer; lib/consent)");
ABSL_FLAG(std::string, terminal, "/dev/tty",
          "serve --consent=terminal: the terminal to ask on");
ABSL_FLAG(std::string, session_id, "",
          "serve: the agent's session id, for the stager's messages");
ABSL_FLAG(std::string, accept_weaker_lockdown, "",
          "run, serve: run even where the kernel lacks seccomp filters (or "
          "Landlock, for the staged run's guard); the reason given here is "
          "reported");

namespace {

using garuda::WeakerLockdown;

// Open, then lock down as the role this process plays (the stager, or its
// staging guard after the fork; none for the on_host runner and run
// --allow-host, docs/lockdown.md), then serve. The opened process is gone
// before the program exits.
int LockDownAndServe(std::unique_ptr<garuda::OpenedStager> opened,
                     const WeakerLockdown& weaker) {
  if (std::optional<garuda::Role> role = opened->role()) {
    absl::StatusOr<garuda::LockdownReport> locked =
        garuda::LockDownAs(*role, opened->needs(), weaker);
    if (!locked.ok()) return opened->Refuse(locked.status());
  }
  return opened->Serve();
}

int Run(const std::vector<std::string>& args,
        const std::vector<std::string>& write_paths,
        const WeakerLockdown& weaker) {
  garuda::StagerRunOptions options;
  options.project = absl::GetFlag(FLAGS_project);
  options.mode = absl::GetFlag(FLAGS_mode);
  options.network = absl::GetFlag(FLAGS_network);
  options.write_paths = write_paths;
  options.allow_host = absl::GetFlag(FLAGS_allow_host);
  options.keep_processes = absl::GetFlag(FLAGS_keep_processes);
  options.argv.assign(args.begin() + 2, args.end());
  options.backend = absl::GetFlag(FLAGS_backend);
  options.session = absl::GetFlag(FLAGS_session);
  options.out = absl::GetFlag(FLAGS_out);
  options.job_file = absl::GetFlag(FLAGS_job);
  return LockDownAndServe(garuda::OpenStagerRun(options), weaker);
}

int Serve(const WeakerLockdown& weaker) {
  garuda::StagerServeOptions options;
  options.channel_fd = absl::GetFlag(FLAGS_channel_fd);
  options.project = absl::GetFlag(FLAGS_project);
  options.mode = absl::GetFlag(FLAGS_mode);
  options.backend = absl::GetFlag(FLAGS_backend);
  options.session_id = absl::GetFlag(FLAGS_session_id);
  options.quiet = absl::GetFlag(FLAGS_quiet);
  options.job_file = absl::GetFlag(FLAGS_job);
  absl::Status usable = garuda::ServeFlagsUsable(
      absl::GetFlag(FLAGS_consent), absl::GetFlag(FLAGS_terminal), &options);
  if (!usable.ok()) return garuda::StagerUsageError(usable);
  return LockDownAndServe(garuda::OpenStagerServe(options), weaker);
}

int Proxy(const WeakerLockdown& weaker) {
  // Open: the channel and its first message, Configure (the ports).
  absl::StatusOr<std::unique_ptr<garuda::netproxy::ProxyProcess>> proxy =
      garuda::netproxy::ProxyProcess::Open(absl::GetFlag(FLAGS_channel_fd));
  // Lock down, before any thread and before Configure is answered.
  absl::Status served =
      proxy.ok()
          ? garuda::LockDownAs(garuda::Role::kProxy, (*proxy)->Needs(), weaker)
                .status()
          : proxy.status();
  // Serve.
  if (served.ok()) served = (*proxy)->Serve();
  return served.ok() ? 0 : garuda::StagerFailed("proxy", served);
}

int Dispatch(int argc, char** argv) {
  std::vector<std::string> write_paths = garuda::TakeWriteFlags(&argc, argv);
  std::vector<std::string> args =
      garuda::ParseProgramFlags(argc, argv, garuda::kStagerUsage);
  garuda::RequireFolderFlag("garuda-stager", "project",
                            absl::GetFlag(FLAGS_project));
  const std::string command = args.size() < 2 ? "" : args[1];
  // A kernel without seccomp (or, for the guard and the proxy, Landlock)
  // is a refusal unless the person accepted less.
  const WeakerLockdown weaker = garuda::StagerWeakerLockdown(
      absl::GetFlag(FLAGS_accept_weaker_lockdown), command);
  if (command == "run") return Run(args, write_paths, weaker);
  if (command == "serve") return Serve(weaker);
  if (command == "proxy") return Proxy(weaker);
  if (command == "probe") return garuda::StagerProbe(absl::GetFlag(FLAGS_json));
  if (command == "end") {
    return garuda::StagerEndSession(absl::GetFlag(FLAGS_project),
                                    absl::GetFlag(FLAGS_session));
  }
  return garuda::StagerUnknownCommand(command);
}

}  // namespace

int main(int argc, char** argv) { garuda::ExitStager(Dispatch(argc, argv)); }
