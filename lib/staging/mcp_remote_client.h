// The agent's side of a remote MCP server (docs/mcp.md, "Remote servers"):
// an mcp::Transport whose every connection goes to the Unix socket of the
// server's own proxy that garuda-stager made (ConnectMcpProxy,
// mcp_remote.h). The agent, which may connect nowhere over TCP but to its
// provider, speaks HTTP CONNECT and TLS there itself, so the server's headers
// (its tokens) stay in this process: they go into the requests' headers only,
// never into a message, a tool result or the model's request.
#ifndef GARUDA_LIB_STAGING_MCP_REMOTE_CLIENT_H_
#define GARUDA_LIB_STAGING_MCP_REMOTE_CLIENT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/mcp/client.h"
#include "lib/staging/client.h"
#include "proto/settings.pb.h"

namespace garuda {

// For a definition with a url: asks garuda-stager for the server's proxy
// (made then, for the session), so that a refusal (no allowedDomains, the
// url's host not among them, no proxy) comes at once, naming the server,
// its file and the field. `network` (optional) gets the line for /mcp
// ("network: only api.example.com through its proxy").
absl::StatusOr<std::unique_ptr<mcp::Transport>> ConnectRemoteMcpServer(
    CommandService* stager, const McpServer& server,
    absl::Duration connect_timeout = absl::Seconds(30),
    std::string* network = nullptr);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_MCP_REMOTE_CLIENT_H_
