// The subcommands of garuda-stager (run, serve, end, probe), called by its
// main.cc with the flags already parsed into options and the lockdown calls
// built there. Each returns the program's exit code and writes messages for
// a person on stderr.
#ifndef GARUDA_LIB_STAGING_STAGER_COMMANDS_H_
#define GARUDA_LIB_STAGING_STAGER_COMMANDS_H_

#include <optional>
#include <string>
#include <vector>

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
  // main.cc's LockDownAs(Role::kStager): taken before the command starts
  // in the sandbox, and the staged run's guard's (Role::kStagingGuard);
  // empty: nothing runs.
  LockDownCall lock_down;
  LockDownCall guard_lock_down;
  // --job FILE: a job's command (lib/staging/job_commands.h): direct mode,
  // the job's write scope, never on the host.
  std::string job_file;
};

// `run`: loads and merges the settings, runs the command in the sandbox
// with its output passed through (a sandbox that cannot be set up fails
// before the command starts; the probe then finds the reason), and returns the
// command's exit code (128 + signal, 124 timed out, 125 not started). Without a
// working sandbox: the strict profile (or requireSandbox) stops with the
// reason and the fix and refuses --allow-host; the default profile says why
// and runs on the host only with --allow-host.
int StagerRun(const StagerRunOptions& options);

// `serve`: lib/staging/service.h, with the stager's messages on stderr.
// Exit code 0 when the session ended (EndSession, or the agent closed the
// channel), 1 on an error (a bad start, a broken channel).
int StagerServe(StagerServeOptions options);

// `end --session NAME`: removes a named staged session's view.
int StagerEndSession(const std::string& project, const std::string& session);

// `probe`: the full probe as text, or one JSON object. Exit code 0 when the
// sandbox works, 1 otherwise.
int StagerProbe(bool json);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_STAGER_COMMANDS_H_
