// `garuda-agent mcp list` and `garuda-agent mcp check NAME` (docs/mcp.md):
// the MCP servers a session in this project would start, and one started
// the way a session starts it (by garuda-stager, in the session's
// sandbox), connected, listed, and stopped.
#ifndef GARUDA_LIB_AGENT_CLI_MCP_COMMAND_H_
#define GARUDA_LIB_AGENT_CLI_MCP_COMMAND_H_

#include <string>
#include <vector>

#include "lib/agent_cli/subcommands.h"

namespace garuda {
namespace agent_cli {

extern const char kMcpUsage[];

// args: the program, "mcp", then "list" or "check NAME". Exit 0: listed, or
// the server started and listed its tools; 1: it did not; 2: a usage or
// settings error (an unknown name among them).
int McpCommand(const CommandLine& line, const std::vector<std::string>& args);

}  // namespace agent_cli
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_CLI_MCP_COMMAND_H_
