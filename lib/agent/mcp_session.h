// A terminal, one-shot or editor session's MCP servers, in its phases
// (lib/agent/session_setup.h): which ones start is settled before the
// lockdown (a project's server may need the person's approval, recorded in
// ~/.garuda/approvals, which a locked-down agent cannot write); they are
// started by garuda-stager, in the session's sandbox, when the session
// starts (the stager starts processes; the agent only asks).
#ifndef GARUDA_LIB_AGENT_MCP_SESSION_H_
#define GARUDA_LIB_AGENT_MCP_SESSION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/agent/agent_options.h"
#include "lib/agent/mcp_servers.h"
#include "lib/agent/services.h"
#include "lib/consent/mcp_approval.h"
#include "proto/stager_service.pb.h"

namespace garuda {
namespace agent {

// The provider's longest tool name (OpenAI's and Anthropic's: 64).
inline constexpr size_t kToolNameLimit = 64;

// Phase 2: the servers of the settings and the project to start, and the
// ones skipped with why. A project's server not yet approved is asked for
// on the terminal when a person is there (`terminal`), else skipped.
absl::StatusOr<McpServerPlan> PlanSessionMcp(const AgentOptions& options,
                                             const std::string& project_root,
                                             bool terminal);

// Phase 4: each planned server started by `stager` (in the session's
// sandbox; in staged mode its changes collected after each call), the
// skipped ones listed. The lines for the session's start are added to
// `notices`. Remote (url) servers are listed as skipped: the agent's own
// lockdown lets it reach only the model provider.
std::unique_ptr<McpServers> StartSessionMcp(
    const McpServerPlan& plan, CommandService* stager,
    const stager::SessionDescription& description,
    const std::string& project_root, std::vector<std::string>* notices);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_MCP_SESSION_H_
