// How a session's MCP servers are started: by garuda-stager in the
// session's sandbox, in every session (the agent itself can start nothing
// once locked down, and a server has no more reach than a command).
#ifndef GARUDA_LIB_AGENT_MCP_LAUNCH_H_
#define GARUDA_LIB_AGENT_MCP_LAUNCH_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/agent/mcp_servers.h"
#include "lib/agent/services.h"
#include "lib/mcp/client.h"
#include "proto/settings.pb.h"

namespace garuda {
namespace agent {

// "~/.garuda/settings.json", "the editor (ACP)": where a server came from.
std::string McpOrigin(const McpServer& server);

// The definition's time limits (0: the defaults: 30 s to start, 5 minutes
// a call).
absl::Duration McpStartTimeout(const McpServerSettings& definition);
absl::Duration McpCallTimeout(const McpServerSettings& definition);

// The server started by the stager (CommandService::StartMcpServer) in the
// session's sandbox; in staged mode each call's changes collected from it.
// `stager` is not owned and outlives the entry.
McpServerEntry StagerMcpEntry(const McpServer& server, CommandService* stager,
                              bool staged);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_MCP_LAUNCH_H_
