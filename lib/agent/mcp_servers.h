// A session's MCP servers (docs/mcp.md, "Tools, permissions and
// commands"): each started through a launcher (garuda-stager in its
// sandbox in a session; plainly in tests), connected (lib/mcp/client.h),
// listed, and its tools made rows of the session's table, named
// mcp__<server>__<tool> (cut to the provider's limit with a stable suffix).
//
// A call of such a row: lib/agent/mcp_tools.h. The `/mcp` command:
// lib/agent/mcp_commands.h. This class keeps the servers' lifecycle.
//
// A server that fails to start, hangs or sends garbage is reported and the
// session goes on without it. One that stops is restarted once; after a
// second stop its tools answer that it is down.
#ifndef GARUDA_LIB_AGENT_MCP_SERVERS_H_
#define GARUDA_LIB_AGENT_MCP_SERVERS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lib/agent/mcp_commands.h"
#include "lib/agent/mcp_rows.h"
#include "lib/agent/mcp_server_state.h"
#include "lib/agent/mcp_tools.h"
#include "lib/mcp/client.h"
#include "lib/tools/tool_table.h"

namespace garuda {
namespace agent {

class McpServers : public McpRows,
                   private McpRestarter,
                   private McpServerAccess {
 public:
  explicit McpServers(McpOptions options);
  ~McpServers() override;

  // Starts each server: its launcher, initialize and the first listing
  // within its start_timeout. One that fails is reported (a notice, its
  // state and error in /mcp) and the others go on.
  void Start(std::vector<McpServerEntry> entries);
  // A server that is not started, with why (listed in /mcp).
  void Skip(const std::string& name, const std::string& origin,
            const std::string& why);

  // The lines for the person that arose since the last call: servers
  // started, failed, skipped, restarted.
  std::vector<std::string> TakeNotices();

  // McpRows: the ready servers' tools (after a list_changed, listed again).
  absl::Status AddRows(ToolTable& table) override;
  // McpRows: lib/agent/mcp_commands.h.
  std::string Command(const std::string& arguments) override;

  std::vector<McpServerView> Servers() const override;
  // Stops and starts one server again (the person's /mcp restart; it does
  // not count against the one automatic restart).
  absl::Status Restart(const std::string& name) override;

 private:
  // McpServerAccess.
  absl::StatusOr<std::string> WithClient(
      const std::string& name,
      absl::FunctionRef<absl::StatusOr<std::string>(mcp::Client&)> use)
      override;
  // McpRestarter.
  bool RestartAfterStop(McpServerState& server,
                        const absl::Status& why) override
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  McpServerState* Find(const std::string& name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Launch, Connect, ListTools; the state and error set either way.
  absl::Status Connect(McpServerState& server)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  McpOptions options_;
  mutable absl::Mutex mu_;
  McpServerList servers_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> notices_ ABSL_GUARDED_BY(mu_);
  McpTools tools_;
  McpCommands commands_;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_MCP_SERVERS_H_
