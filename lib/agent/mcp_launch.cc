#include "lib/agent/mcp_launch.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/policy/mcp_servers.h"
#include "lib/staging/mcp_remote_client.h"

namespace garuda {
namespace agent {
namespace {

constexpr absl::Duration kDefaultStart = absl::Seconds(30);
constexpr absl::Duration kDefaultCall = absl::Minutes(5);

}  // namespace

std::string McpOrigin(const McpServer& server) {
  if (server.source() == McpServer::EDITOR) return "the editor (ACP)";
  if (!server.source_file().empty()) return server.source_file();
  switch (server.source()) {
    case McpServer::USER:
      return "the person's settings";
    case McpServer::POLICY:
      return "a policy file";
    case McpServer::PROJECT:
      return "the project";
    default:
      return "the settings";
  }
}

absl::Duration McpStartTimeout(const McpServerSettings& definition) {
  return definition.start_timeout_ms() == 0
             ? kDefaultStart
             : absl::Milliseconds(definition.start_timeout_ms());
}

absl::Duration McpCallTimeout(const McpServerSettings& definition) {
  return definition.call_timeout_ms() == 0
             ? kDefaultCall
             : absl::Milliseconds(definition.call_timeout_ms());
}

McpServerEntry StagerMcpEntry(const McpServer& server, CommandService* stager,
                              bool staged) {
  McpServerEntry entry;
  entry.name = server.name();
  entry.origin = McpOrigin(server);
  entry.sandbox = "started by garuda-stager";
  entry.start_timeout = McpStartTimeout(server.definition());
  entry.call_timeout = McpCallTimeout(server.definition());
  entry.start = [server, stager]() -> absl::StatusOr<McpStarted> {
    McpStarted started;
    if (McpTransport(server.definition()) == "http") {
      // Remote: through a proxy of its own that the stager makes; the
      // headers stay in this process (lib/staging/mcp_remote_client.h).
      std::string network;
      ASSIGN_OR_RETURN(
          started.transport,
          ConnectRemoteMcpServer(
              stager, server, McpStartTimeout(server.definition()), &network));
      started.sandbox = absl::StrCat("remote, ", network);
      return started;
    }
    ASSIGN_OR_RETURN(CommandService::McpServerPipes pipes,
                     stager->StartMcpServer(server));
    started.transport =
        mcp::StdioTransport(std::move(pipes.to_server),
                            std::move(pipes.from_server), server.name());
    started.sandbox = pipes.started.sandbox();
    return started;
  };
  if (staged) {
    std::string name = server.name();
    entry.changes = [name, stager] { return stager->McpServerChanges(name); };
  }
  return entry;
}

}  // namespace agent
}  // namespace garuda
