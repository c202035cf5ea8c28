#include "lib/staging/mcp_remote_client.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

namespace garuda {

absl::StatusOr<std::unique_ptr<mcp::Transport>> ConnectRemoteMcpServer(
    CommandService* stager, const McpServer& server,
    absl::Duration connect_timeout, std::string* network) {
  if (server.definition().url().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MCP server \"", server.name(), "\" (", server.source_file(),
        ") has no url: it is a stdio server, started by StartMcpServer"));
  }
  ASSIGN_OR_RETURN(stager::McpProxyConnected proxy,
                   stager->ConnectMcpProxy(server));
  if (network != nullptr) *network = proxy.network();
  mcp::HttpOptions http;
  http.url = server.definition().url();
  for (const auto& [name, value] : server.definition().headers()) {
    http.headers.emplace_back(name, value);
  }
  http.proxy_unix_address = proxy.address();
  http.connect_timeout = connect_timeout;
  return mcp::HttpTransport(std::move(http), server.name());
}

}  // namespace garuda
