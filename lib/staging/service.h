// `garuda-stager serve`: the stager's session channel with garuda-agent
// (proto/stager_service.proto). Started once per session on a socketpair;
// it loads the project's settings and runs the probe once, then runs each
// command the agent sends, with its output captured, in the session's mode:
//
//   direct: in the OS sandbox, the project writable;
//   staged: in the OS sandbox over one staging view that lives as long as
//           the channel (made at the start, brought up to date before each
//           command, removed at EndSession or when the channel closes; a
//           killed stager's view is removed at the next start for the
//           project). Each command's changes come back as a ChangeSet frame
//           stream in a sealed memfd passed with the reply.
//
// A RunCommand with on_host runs outside the OS sandbox (never staged), and
// is refused when the strict profile or requireSandbox is on. Otherwise the
// stager decides itself whether it runs (lib/consent): it asks the person
// on the terminal, or re-checks the allow rules it read at start; the
// agent's word is never taken, but for an explicit relayed answer with
// --consent=relayed. This process locks itself down before it serves (and,
// in staged mode, cannot write the project: the view's read-only bind), so
// on_host commands go to a second stager process started before both,
// `garuda-stager serve --mode host`, which runs nothing else.
#ifndef GARUDA_LIB_STAGING_SERVICE_H_
#define GARUDA_LIB_STAGING_SERVICE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/consent/consent.h"
#include "lib/ipc/channel.h"

namespace garuda {

// Output captured per stream when the request says 0, and the most a
// request may ask for (both streams fit in one 1 MiB reply frame).
inline constexpr uint64_t kDefaultOutputLimit = 100000;
inline constexpr uint64_t kMaxOutputLimit = 256 * 1024;

// StagerServeOptions::mode of the internal on_host runner.
inline constexpr char kHostRunnerMode[] = "host";

struct StagerServeOptions {
  int channel_fd = -1;
  std::string project;  // empty: the current folder
  // "direct" or "staged"; empty: from the settings. "host": the internal
  // on_host runner of a staged session (no probe, on_host commands only).
  std::string mode;
  std::string backend;     // staged: "auto", "overlay", "copy"; empty: settings
  std::string session_id;  // the agent's session, for messages
  // Who agrees to an on_host command (not used by the "host" runner, which
  // runs only what its stager agreed to).
  ConsentOptions consent;
  // The program to start as the on_host runner of a staged session
  // (normally /proc/self/exe).
  std::string self = "/proc/self/exe";
  // Lines for the person (the stager's stderr); none with `quiet`.
  std::function<void(const std::string& line)> log;
  // No "serving" line: the agent's helpers share the person's terminal,
  // and the session's first line says what the stager serves.
  bool quiet = false;
  // --job FILE: a job's session (lib/staging/job_commands.h): direct mode
  // only, the sandbox required, the job's write scope, nothing on the host.
  std::string job_file;
};

// The serve in garuda-stager's main.cc's steps: Open (the channel, the
// settings, the probe, the staging view and its read-only bind, the allow
// list's proxy), then main.cc's lockdown (Role::kStager; none for the
// on_host runner: what it runs is a command the person agreed to run on the
// host, as themselves, and a filter or no_new_privs would bind that command
// too: sudo, a debugger), then Serve.
class StagerServer {
 public:
  // A bad start (unreadable settings, no such project) is an error before
  // anything is served. `options` must outlive the result.
  static absl::StatusOr<std::unique_ptr<StagerServer>> Open(
      const StagerServeOptions& options);
  ~StagerServer();
  // Serves until EndSession or until the agent closes the channel (OK), or
  // until the protocol is broken (the error).
  absl::Status Serve();

 private:
  class Service;
  StagerServer(ipc::Channel channel, const StagerServeOptions& options);
  ipc::Channel channel_;
  std::unique_ptr<Service> service_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_SERVICE_H_
