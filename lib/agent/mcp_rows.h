// What a session asks of its MCP servers (lib/agent/mcp_servers.h), as an
// interface, so that the turn loop depends on no MCP code: the rows of the
// servers' tools, put in the session's table at its start and again before
// each model request (a server's list may have changed), and the `/mcp`
// command's text.
#ifndef GARUDA_LIB_AGENT_MCP_ROWS_H_
#define GARUDA_LIB_AGENT_MCP_ROWS_H_

#include <string>

#include "absl/status/status.h"
#include "lib/tools/tool_table.h"

namespace garuda {
namespace agent {

class McpRows {
 public:
  virtual ~McpRows() = default;
  // Registers the rows `table` lacks. An error only for a programmer's
  // mistake; a server's problems are reported, not returned.
  virtual absl::Status AddRows(ToolTable& table) = 0;
  // `/mcp ARGUMENTS`: the text to show the person.
  virtual std::string Command(const std::string& arguments) = 0;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_MCP_ROWS_H_
