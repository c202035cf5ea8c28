// Remote MCP servers (a definition with a url) as garuda-stager serves them
// (docs/mcp.md, "Remote servers"): the agent may open no TCP connection but
// to its provider, so it asks the stager for the way out. For each server the
// stager starts, once, a proxy of the server's own (McpHost::StartProxy,
// exactly a stdio server's: its allowedDomains, the session's denied hosts
// and ports) and hands it a listening Unix socket of its own instead of a
// sandbox's loopback listener; ConnectMcpProxy answers with its address,
// which the agent connects to (AF_UNIX is all its lockdown allows besides
// its provider). The agent speaks HTTP CONNECT there and keeps the server's
// headers: neither the stager nor the proxy sees them in clear (TLS), and
// nothing of them reaches the model. (Connected sockets passed to the agent
// were the first design; Debian 12's libcurl cannot use one: see
// lib/provider/http.cc.)
//
// The listener has an abstract address of 16 random bytes in the stager's
// network namespace (never a sandbox's): a process of the person's that
// guessed it would reach, through the proxy, only hosts it can reach itself.
#ifndef GARUDA_LIB_STAGING_MCP_REMOTE_H_
#define GARUDA_LIB_STAGING_MCP_REMOTE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"
#include "lib/policy/mcp_servers.h"
#include "lib/staging/mcp_host.h"
#include "proto/settings.pb.h"
#include "proto/stager_service.pb.h"

namespace garuda {

class McpRemote {
 public:
  // `host` (not owned) starts the proxies.
  explicit McpRemote(const McpHost* host);
  ~McpRemote();  // ends every proxy
  McpRemote(const McpRemote&) = delete;
  McpRemote& operator=(const McpRemote&) = delete;

  // The address of `server`'s proxy, in `reply`. The proxy is made at the
  // first call for that name (again when the definition changed or it
  // died).
  // FAILED_PRECONDITION naming the server, its file and the field when it
  // has no url, no allowedDomains, or a url whose host they do not allow.
  absl::Status Connect(const McpServer& server,
                       stager::McpProxyConnected* reply);

 private:
  struct Proxy;
  absl::StatusOr<std::unique_ptr<Proxy>> Start(const McpServer& server);

  const McpHost* host_;
  std::map<std::string, std::unique_ptr<Proxy>> proxies_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_MCP_REMOTE_H_
