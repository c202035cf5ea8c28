// The rows of a session's MCP servers' tools (docs/mcp.md, "Tools,
// permissions and commands"), part of McpServers (lib/agent/mcp_servers.h):
// each listed tool a row named mcp__<server>__<tool> (cut to the provider's
// limit with a stable suffix), and a call of such a row: the permission
// (rules mcp__<server>__<tool> and mcp__<server>; no rule asks, whatever
// the server's hints say), the call with the server's time limit and the
// turn's Ctrl-C, the result capped as every tool's, in staged mode the
// server's changes put to the change question as a staged command's, and
// an "mcp_call" audit event (server, tool, SHA-256 of the arguments,
// outcome, files changed).
#ifndef GARUDA_LIB_AGENT_MCP_TOOLS_H_
#define GARUDA_LIB_AGENT_MCP_TOOLS_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lib/agent/mcp_server_state.h"
#include "lib/mcp/client.h"
#include "lib/tools/tool_table.h"

namespace garuda {
namespace agent {

class ToolRun;  // lib/agent/tool_run.h

// What a call asks of the servers' lifecycle (McpServers).
class McpRestarter {
 public:
  virtual ~McpRestarter() = default;
  // The one automatic restart of a server found stopped; false when it is
  // down now. Under the servers' mutex.
  virtual bool RestartAfterStop(McpServerState& server,
                                const absl::Status& why) = 0;
};

class McpTools {
 public:
  // `mu` guards the servers; a call takes it. Both outlive this.
  McpTools(size_t name_limit, absl::Mutex* mu, McpRestarter* restarter);

  // `list` as `server`'s tools: a tool whose schema a row cannot take, or
  // whose name another of `servers` (or of its own tools) has, is not
  // offered and said in its problems. Under the servers' mutex.
  void SetTools(McpServerState& server, mcp::ToolList list,
                const McpServerList& servers);
  // The rows `table` lacks of the ready `servers`' tools (after a
  // list_changed, listed again). Under the servers' mutex.
  absl::Status AddRows(const McpServerList& servers, ToolTable& table);

 private:
  ToolRow RowFor(McpServerState& server, std::shared_ptr<McpToolState> tool);
  absl::StatusOr<ToolCallDone> Call(ToolRun& run, McpServerState& server,
                                    std::shared_ptr<McpToolState> tool);

  size_t name_limit_;
  absl::Mutex* mu_;
  McpRestarter* restarter_;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_MCP_TOOLS_H_
