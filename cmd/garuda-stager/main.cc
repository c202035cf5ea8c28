// garuda-stager: runs commands for Garuda in an OS sandbox, and says what
// this machine's sandbox can do.
#include <unistd.h>

#include <cstdio>
#include <cstring>
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
ABSL_FLAG(int, channel_fd, -1,
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

constexpr char kUsage[] =
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

// absl keeps only the last value of a repeated flag: every --write before
// "--" is taken out here, so that `--write a --write b` means both.
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

// Ends the program with `code` once stdio is flushed, without running the
// destructors of static objects: protobuf's registry of every linked
// .proto file and its default instances, Abseil's flags. They only free
// memory that the kernel takes back anyway, and freeing it cost the stager
// page faults and time at every command (docs/sandbox.md, "Start-up of
// garuda-stager"). Every subcommand has closed, synced or renamed its
// files before it returns its code; nothing else holds unwritten data.
[[noreturn]] void Exit(int code) {
  std::fflush(nullptr);
  ::_exit(code);
}

// The steps of `run` and `serve`, after their open: lock down as the role
// this process plays (the stager, or its staging guard after the fork; none
// for the on_host runner and run --allow-host, docs/lockdown.md), then
// serve. The opened process is gone before the program exits.
int LockDownAndServe(std::unique_ptr<garuda::OpenedStager> opened,
                     const garuda::WeakerLockdown& weaker) {
  if (std::optional<garuda::Role> role = opened->role()) {
    absl::StatusOr<garuda::LockdownReport> locked =
        garuda::LockDownAs(*role, opened->needs(), weaker);
    if (!locked.ok()) return opened->Refuse(locked.status());
  }
  return opened->Serve();
}

int Dispatch(int argc, char** argv) {
  std::vector<std::string> write_paths = TakeWriteFlags(&argc, argv);
  std::vector<std::string> positional =
      garuda::ParseProgramFlags(argc, argv, kUsage);
  garuda::RequireFolderFlag("garuda-stager", "project",
                            absl::GetFlag(FLAGS_project));
  if (positional.size() < 2) {
    std::fprintf(stderr, "garuda-stager %s\n(see --help)\n", kUsage);
    return 2;
  }
  const std::string& command = positional[1];
  if (command == "probe") return garuda::StagerProbe(absl::GetFlag(FLAGS_json));
  // The lockdowns, one role each (lib/lockdown/roles.h), taken by the
  // subcommand between opening what it needs and serving; a kernel without
  // seccomp (or, for the guard and the proxy, Landlock) is a refusal unless
  // the person accepted less.
  const garuda::WeakerLockdown weaker{
      absl::GetFlag(FLAGS_accept_weaker_lockdown),
      [command](const std::string& line) {
        std::fprintf(stderr, "garuda-stager %s: %s\n", command.c_str(),
                     line.c_str());
      }};
  if (command == "run") {
    garuda::StagerRunOptions options;
    options.project = absl::GetFlag(FLAGS_project);
    options.mode = absl::GetFlag(FLAGS_mode);
    options.network = absl::GetFlag(FLAGS_network);
    options.write_paths = write_paths;
    options.allow_host = absl::GetFlag(FLAGS_allow_host);
    options.keep_processes = absl::GetFlag(FLAGS_keep_processes);
    options.argv.assign(positional.begin() + 2, positional.end());
    options.backend = absl::GetFlag(FLAGS_backend);
    options.session = absl::GetFlag(FLAGS_session);
    options.out = absl::GetFlag(FLAGS_out);
    options.job_file = absl::GetFlag(FLAGS_job);
    return LockDownAndServe(garuda::OpenStagerRun(options), weaker);
  }
  if (command == "serve") {
    garuda::StagerServeOptions options;
    options.channel_fd = absl::GetFlag(FLAGS_channel_fd);
    options.project = absl::GetFlag(FLAGS_project);
    options.mode = absl::GetFlag(FLAGS_mode);
    options.backend = absl::GetFlag(FLAGS_backend);
    options.session_id = absl::GetFlag(FLAGS_session_id);
    options.quiet = absl::GetFlag(FLAGS_quiet);
    options.job_file = absl::GetFlag(FLAGS_job);
    absl::StatusOr<garuda::ConsentMode> consent =
        garuda::ParseConsentMode(absl::GetFlag(FLAGS_consent));
    if (!consent.ok()) {
      std::fprintf(stderr, "garuda-stager: %s\n",
                   std::string(consent.status().message()).c_str());
      return 2;
    }
    options.consent.mode = *consent;
    options.consent.terminal = absl::GetFlag(FLAGS_terminal);
    if (options.channel_fd < 0) {
      std::fprintf(stderr, "garuda-stager: serve needs --channel-fd\n");
      return 2;
    }
    return LockDownAndServe(garuda::OpenStagerServe(options), weaker);
  }
  if (command == "proxy") {
    // Open: the channel and its first message, Configure (the ports).
    absl::StatusOr<std::unique_ptr<garuda::netproxy::ProxyProcess>> proxy =
        garuda::netproxy::ProxyProcess::Open(absl::GetFlag(FLAGS_channel_fd));
    // Lock down, before any thread and before Configure is answered.
    absl::Status served =
        proxy.ok() ? garuda::LockDownAs(garuda::Role::kProxy,
                                        (*proxy)->Needs(), weaker)
                         .status()
                   : proxy.status();
    // Serve.
    if (served.ok()) served = (*proxy)->Serve();
    if (!served.ok()) {
      std::fprintf(stderr, "garuda-stager proxy: %s\n",
                   std::string(served.message()).c_str());
      return 1;
    }
    return 0;
  }
  if (command == "end") {
    return garuda::StagerEndSession(absl::GetFlag(FLAGS_project),
                                    absl::GetFlag(FLAGS_session));
  }
  std::fprintf(
      stderr,
      "garuda-stager: unknown command \"%s\" (run, serve, proxy, probe, "
      "end)\n",
      command.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) { Exit(Dispatch(argc, argv)); }
