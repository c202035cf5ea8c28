// `garuda-agent acp-session`: one editor session, started by the front
// (`garuda-agent acp`, lib/acp/front.h) for a session/new or session/load.
// It reads that first request from its socket, opens the session in the
// request's cwd exactly as a terminal session does (lib/agent/session_setup.h:
// settings, model, journal, helpers with --consent=relayed, code tools),
// locks itself down as the agent, and then serves session/prompt and
// session/cancel until the front closes the socket.
#ifndef GARUDA_LIB_ACP_SESSION_WORKER_H_
#define GARUDA_LIB_ACP_SESSION_WORKER_H_

#include "lib/agent/agent_lockdown.h"
#include "lib/agent/agent_options.h"
#include "lib/lockdown/roles.h"

namespace garuda {
namespace acp {

struct WorkerOptions {
  // Model overrides, helpers' folder, --accept-weaker-lockdown; the project
  // and the session to resume come from the request.
  agent::AgentOptions agent;
  int channel_fd = 3;
  // The agent's lockdown (lib/agent/agent_lockdown.h's LockDownAgent, set
  // by main.cc), taken once the helpers run; empty: the worker refuses to
  // serve.
  LockDownStep<agent::AgentLockdown> lock_down;
};

// The exit status: 0 after a session that started and ended, 1 otherwise
// (the front has the JSON-RPC error already).
int RunSessionWorker(const WorkerOptions& options);

}  // namespace acp
}  // namespace garuda

#endif  // GARUDA_LIB_ACP_SESSION_WORKER_H_
