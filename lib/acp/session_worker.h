// `garuda-agent acp-session`: one editor session, started by the front
// (`garuda-agent acp`, lib/acp/front.h) for a session/new or session/load.
// It reads that first request from its socket, opens the session in the
// request's cwd exactly as a terminal session does (lib/agent/session_setup.h:
// settings, model, journal, helpers with --consent=relayed, code tools),
// is locked down as the agent by main.cc, and then serves session/prompt and
// session/cancel until the front closes the socket.
#ifndef GARUDA_LIB_ACP_SESSION_WORKER_H_
#define GARUDA_LIB_ACP_SESSION_WORKER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/agent/agent_lockdown.h"
#include "lib/agent/agent_options.h"

namespace garuda {
namespace acp {

struct WorkerOptions {
  // Model overrides, helpers' folder, --accept-weaker-lockdown; the project
  // and the session to resume come from the request.
  agent::AgentOptions agent;
  int channel_fd = 3;
};

// The worker in garuda-agent's main.cc's three steps: Open (the request
// that opens the session, the session in its cwd, the helpers), then the
// agent's lockdown there (LockDownAs(Role::kAgent, AgentNeeds(Lockdown()))),
// then Serve; or Refuse when the lockdown failed.
class SessionWorker {
 public:
  // Reads the first request and opens and starts the session. An error
  // has been answered to the front already (its JSON-RPC error).
  static absl::StatusOr<std::unique_ptr<SessionWorker>> Open(
      const WorkerOptions& options);
  ~SessionWorker();

  // What the agent's lockdown leaves this session (its folder, the
  // provider's port).
  agent::AgentLockdown Lockdown() const;

  // Serves session/prompt and session/cancel until the front closes the
  // socket; the exit status: 0 after a session that started and ended, 1
  // otherwise (the front has the JSON-RPC error).
  int Serve(const std::string& lockdown_summary);

  // The lockdown failed: the front hears why, the helpers stop; 1.
  int Refuse(const absl::Status& why);

 private:
  struct Parts;
  explicit SessionWorker(const WorkerOptions& options);
  void Answer(int code, absl::string_view message);

  int fd_;
  std::unique_ptr<Parts> parts_;
};

}  // namespace acp
}  // namespace garuda

#endif  // GARUDA_LIB_ACP_SESSION_WORKER_H_
