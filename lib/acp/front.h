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
#include "absl/strings/string_view.h"
#include "lib/base/unique_fd.h"

namespace garuda {
namespace acp {

struct FrontOptions {
  int in_fd = 0, out_fd = 1;
};

// A new session worker's socket (the launcher's, or a test's).
using WorkerStarter = std::function<absl::StatusOr<UniqueFd>()>;
// The front's loop, once garuda-agent's main.cc has started the launcher
// (lib/acp/launcher.h) and locked down as Role::kAcpFront: from then on it
// only relays lines between the descriptors it holds (the editor's pipes,
// the launcher's and the workers' sockets). Serves until the editor closes
// standard input; 0.
int ServeFront(const FrontOptions& options, WorkerStarter start_worker);

// "garuda-agent acp: LINE" on standard error (standard output is the
// protocol's).
void LogFront(absl::string_view line);

// ACP's protocolVersion spoken here.
inline constexpr int kProtocolVersion = 1;

}  // namespace acp
}  // namespace garuda

#endif  // GARUDA_LIB_ACP_FRONT_H_
