// garuda-agent's terminal and one-shot session, in the phases
// cmd/garuda-agent/main.cc calls one after the other, so that its main
// reads as every Garuda program's skeleton: flags -> options; open
// (OpenSession, lib/agent/session_setup.h); start what must be started
// before the lockdown (StartSession); lock down (LockDownAgent,
// lib/agent/agent_lockdown.h, with SessionLockdown's paths); serve the
// person (ServeSession: the terminal when standard input is one, else plain
// lines and "no" to every question; interactive or one-shot); stop the
// helpers in order (EndSession).
#ifndef GARUDA_LIB_AGENT_AGENT_H_
#define GARUDA_LIB_AGENT_AGENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "lib/agent/agent_options.h"
#include "lib/agent/helpers.h"
#include "lib/agent/mcp_session.h"
#include "lib/agent/session_setup.h"
#include "lib/knowledge/code_tools_client.h"
#include "proto/stager_service.pb.h"

namespace garuda {
namespace agent {

// What StartSession started. Its code tools stop when it is destroyed;
// the helpers stop in EndSession.
struct StartedSession {
  std::unique_ptr<Helpers> helpers;
  // The stager's answer to DescribeSession: mode, profile, backend.
  stager::SessionDescription description;
  std::unique_ptr<knowledge::CodeToolsHelper> code_tools;  // null: none
  // The MCP servers to start (the stager starts them with the session).
  McpServerPlan mcp_plan;
  ~StartedSession();
};

// Phase 2: the helpers (the stager describes its session), the code tools,
// libcurl's start: everything a locked-down agent could no longer start or
// load. An error names what did not start; the helpers already started
// are stopped.
absl::StatusOr<std::unique_ptr<StartedSession>> StartSession(
    const AgentOptions& options, OpenedSession& opened);

// Phase 4: serves the person: one turn (one-shot) or every line. The exit
// status (ExitCode). `lockdown_summary`: the line the session starts with
// ("" for none).
int ServeSession(const AgentOptions& options, OpenedSession& opened,
                 StartedSession& started, const std::string& lockdown_summary);

// The end: stops the helpers in order (the stager ends its session, the
// applier, the budgeter, the auditor last), then the code tools. Returns
// `code`, or kExitError when a session that ended well could not stop a
// helper (said on options.err_fd).
int EndSession(const AgentOptions& options, StartedSession& started, int code);

// `garuda-agent sessions`: this project's sessions, one a line: id, start,
// turns, first prompt; oldest first.
int ListSessionsCommand(const AgentOptions& options);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_AGENT_H_
