// The subcommands of garuda-stager (run, serve, end, probe), called by its
// main.cc with the flags already parsed into options. `run` and `serve` are
// opened here and locked down and served by main.cc (OpenedStager); each
// subcommand ends in the program's exit code and writes messages for a
// person on stderr.
#ifndef GARUDA_LIB_STAGING_STAGER_COMMANDS_H_
#define GARUDA_LIB_STAGING_STAGER_COMMANDS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/lockdown/roles.h"
#include "lib/staging/service.h"

namespace garuda {

// The exit code when garuda-stager itself refuses or cannot run a command
// (as env(1) and timeout(1) use 125).
inline constexpr int kStagerRefused = 125;

struct StagerRunOptions {
  std::string project;  // empty: the current folder
  std::string mode;     // "direct"; empty: from the settings
  bool network = false;
  std::vector<std::string> write_paths;
  bool allow_host = false;
  bool keep_processes = false;
  std::vector<std::string> argv;
  // Staged mode (lib/staging/session.h).
  std::string backend;  // --backend; empty: from the settings
  std::string session;  // --session NAME; empty: one shot
  std::string out;      // --out FILE; empty: stdout
  // --job FILE: a job's command (lib/staging/job_commands.h): direct mode,
  // the job's write scope, never on the host.
  std::string job_file;
};

// One garuda-stager process between main.cc's open and serve steps:
// main.cc locks it down as role() with needs() (LockDownAs), then Serve()s,
// or, when the lockdown cannot be applied, Refuse()s. Destroyed before the
// program exits (it may hold a one-shot staging view to remove).
class OpenedStager {
 public:
  virtual ~OpenedStager() = default;
  // The role this process plays (a run or serve may have forked its
  // staging guard: Role::kStagingGuard in the guard). nullopt: no lockdown,
  // by design (the on_host runner, run --allow-host: docs/lockdown.md), or
  // the process has ended already and Serve() only returns its code.
  virtual std::optional<Role> role() const = 0;
  virtual RoleNeeds needs() const { return {}; }
  // The exit code.
  virtual int Serve() = 0;
  // The lockdown failed: said, nothing run (a guard stops its run and
  // removes what it made); the exit code.
  virtual int Refuse(const absl::Status& why) = 0;
};

// `run`: loads and merges the settings, makes the sandbox's policy (staged
// mode: forks the guard, makes the staging view), starts the allow list's
// proxy. Served: runs the command in the sandbox with its output passed
// through (a sandbox that cannot be set up fails before the command
// starts; the probe then finds the reason); the exit code is the command's
// (128 + signal, 124 timed out, 125 not started). Without a working
// sandbox: the strict profile (or requireSandbox) stops with the reason
// and the fix and refuses --allow-host; the default profile says why and
// runs on the host only with --allow-host. `options` must outlive the
// result.
std::unique_ptr<OpenedStager> OpenStagerRun(const StagerRunOptions& options);

// `serve`: lib/staging/service.h, with the stager's messages on stderr;
// forks the staging guard first (not for the on_host runner). Exit code 0
// when the session ended (EndSession, or the agent closed the channel), 1
// on an error (a bad start, a broken channel).
std::unique_ptr<OpenedStager> OpenStagerServe(
    const StagerServeOptions& options);

// `end --session NAME`: removes a named staged session's view.
int StagerEndSession(const std::string& project, const std::string& session);

// `probe`: the full probe as text, or one JSON object. Exit code 0 when the
// sandbox works, 1 otherwise.
int StagerProbe(bool json);

// garuda-stager's main.cc's pieces that are not flags: its usage text,
// --write (absl keeps only the last value of a repeated flag: every --write
// before "--" is taken out of argv here, so that `--write a --write b`
// means both), the checks of serve's flags, and the messages of a usage
// error (exit 2), of a failed subcommand (exit 1) and of an unknown one.
extern const char kStagerUsage[];
// --accept-weaker-lockdown WHY, its line said as "garuda-stager COMMAND: ".
WeakerLockdown StagerWeakerLockdown(const std::string& why,
                                    const std::string& command);
std::vector<std::string> TakeWriteFlags(int* argc, char** argv);
absl::Status ServeFlagsUsable(const std::string& consent,
                              const std::string& terminal,
                              StagerServeOptions* options);
int StagerUsageError(const absl::Status& status);
int StagerFailed(const std::string& command, const absl::Status& status);
int StagerUnknownCommand(const std::string& command);

// Ends the program with `code` once stdio is flushed, without running the
// destructors of static objects: protobuf's registry of every linked
// .proto file and its default instances, Abseil's flags. They only free
// memory that the kernel takes back anyway, and freeing it cost the stager
// page faults and time at every command (docs/sandbox.md, "Start-up of
// garuda-stager"). Every subcommand has closed, synced or renamed its
// files before it returns its code; nothing else holds unwritten data.
[[noreturn]] void ExitStager(int code);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_STAGER_COMMANDS_H_
