// `garuda-agent acp`: Garuda as an Agent Client Protocol agent, JSON-RPC
// 2.0 over standard input and output (only protocol messages on standard
// output; every log goes to standard error). The front answers initialize
// itself, starts one session worker per session/new or session/load
// through its launcher (lib/acp/launcher.h), and relays each session's
// messages between the editor and that worker, checking every message a
// worker sends: only session/update and session/request_permission of its
// own session, and answers to requests it was given. Malformed JSON, an
// unknown method or session and a message over the size limit are
// JSON-RPC errors; the connection stays up.
#ifndef GARUDA_LIB_ACP_FRONT_H_
#define GARUDA_LIB_ACP_FRONT_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"
#include "lib/lockdown/lockdown.h"
#include "lib/lockdown/roles.h"

namespace garuda {
namespace acp {

// The front's role: it relays lines between descriptors it already holds,
// so it writes no file, opens no network socket and starts no process (the
// agent role's seccomp filter without the network: no exec, no fork; a
// Landlock domain with nothing writable).
struct AcpFrontLockdown : RoleLockdown {};
absl::Status LockDownAcpFront(const AcpFrontLockdown& what,
                              LockdownReport* report);

struct FrontOptions {
  // The worker's command line: this program, `acp-session`, and the flags
  // passed on (model, helpers' folder, weaker lockdown).
  std::vector<std::string> worker_argv;
  int in_fd = 0, out_fd = 1;
  std::string accept_weaker_lockdown;
  // LockDownAcpFront (main.cc sets it), taken once the launcher is forked;
  // empty: the front refuses to serve.
  LockDownStep<AcpFrontLockdown> lock_down;
};

// Serves until the editor closes standard input; 0, or 1 when the front
// could not start.
int RunFront(const FrontOptions& options);

// A new session worker's socket (the launcher's, or a test's).
using WorkerStarter = std::function<absl::StatusOr<UniqueFd>()>;
// RunFront's loop, after the launcher and the lockdown.
int ServeFront(const FrontOptions& options, WorkerStarter start_worker);

// ACP's protocolVersion spoken here.
inline constexpr int kProtocolVersion = 1;

}  // namespace acp
}  // namespace garuda

#endif  // GARUDA_LIB_ACP_FRONT_H_
