// An editor's MCP servers (ACP's `mcpServers` in session/new and
// session/load): each turned into the McpServer a settings file would have
// made (source EDITOR), so that the session starts it the same way, by
// garuda-stager in the session's sandbox (docs/acp.md, docs/mcp.md).
#ifndef GARUDA_LIB_ACP_MCP_SERVERS_H_
#define GARUDA_LIB_ACP_MCP_SERVERS_H_

#include "google/protobuf/struct.pb.h"
#include "lib/consent/mcp_approval.h"

namespace garuda {
namespace acp {

// Adds the editor's servers (`servers`: the request's list, may be null) to
// `plan`: stdio ones {name, command, args, env: [{name, value}]} to start,
// unless the settings already define that name or the entry is not valid
// (then skipped with why). Remote ones (http, sse) are skipped: the
// agent's lockdown reaches only the model provider, and initialize says
// so (mcpCapabilities).
void AddEditorMcpServers(const google::protobuf::Value* servers,
                         McpServerPlan* plan);

}  // namespace acp
}  // namespace garuda

#endif  // GARUDA_LIB_ACP_MCP_SERVERS_H_
