// The `/mcp` command of a session's MCP servers (docs/mcp.md), part of
// McpServers (lib/agent/mcp_servers.h): the servers' list, a person's
// restart, and the servers' resources and prompts read for the person
// (never put in the model's context).
#ifndef GARUDA_LIB_AGENT_MCP_COMMANDS_H_
#define GARUDA_LIB_AGENT_MCP_COMMANDS_H_

#include <map>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/agent/mcp_server_state.h"
#include "lib/mcp/client.h"

namespace garuda {
namespace agent {

// What the command asks of the servers (McpServers).
class McpServerAccess {
 public:
  virtual ~McpServerAccess() = default;
  virtual std::vector<McpServerView> Servers() const = 0;
  // The person's restart of one server.
  virtual absl::Status Restart(const std::string& name) = 0;
  // `use` called with the client of the ready server `name`, under the
  // servers' mutex (no call shares the client meanwhile), or why there is
  // no such client.
  virtual absl::StatusOr<std::string> WithClient(
      const std::string& name,
      absl::FunctionRef<absl::StatusOr<std::string>(mcp::Client&)> use) = 0;
};

class McpCommands {
 public:
  // `servers` outlives this.
  explicit McpCommands(McpServerAccess* servers);

  // /mcp; /mcp restart NAME; /mcp resources NAME; /mcp read NAME URI;
  // /mcp prompts NAME; /mcp prompt NAME PROMPT [ARG=VALUE ...].
  std::string Command(const std::string& arguments);

  absl::StatusOr<std::string> Resources(const std::string& name);
  absl::StatusOr<std::string> ReadResource(const std::string& name,
                                           const std::string& uri);
  absl::StatusOr<std::string> Prompts(const std::string& name);
  absl::StatusOr<std::string> GetPrompt(
      const std::string& name, const std::string& prompt,
      const std::map<std::string, std::string>& arguments);

 private:
  // The servers as /mcp lists them.
  std::string List() const;

  McpServerAccess* servers_;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_MCP_COMMANDS_H_
