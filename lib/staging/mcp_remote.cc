#include "lib/staging/mcp_remote.h"

#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "google/protobuf/util/message_differencer.h"
#include "lib/base/errno_status.h"
#include "lib/base/status_macros.h"
#include "lib/ipc/channel.h"
#include "lib/rules/domain_rules.h"

namespace garuda {

struct McpRemote::Proxy {
  McpServerSettings definition;
  McpServerProxy started;
  std::string address;  // sun_path's bytes

  ~Proxy() {
    if (started.attached) started.attached->End().IgnoreError();
  }
};

McpRemote::McpRemote(const McpHost* host) : host_(host) {}

McpRemote::~McpRemote() { proxies_.clear(); }

namespace {

absl::Status NotConnected(const McpServer& server, absl::string_view field,
                          absl::string_view why) {
  return absl::FailedPreconditionError(absl::StrCat(
      "MCP server \"", server.name(), "\" (", server.source_file(),
      ", mcpServers.", server.name(), ".", field, ") is not connected: ", why));
}

}  // namespace

absl::StatusOr<std::unique_ptr<McpRemote::Proxy>> McpRemote::Start(
    const McpServer& server) {
  const McpServerSettings& d = server.definition();
  absl::StatusOr<std::string> host = UrlHost(d.url());
  if (!host.ok()) return NotConnected(server, "url", host.status().message());
  if (d.allowed_domains_size() == 0) {
    return NotConnected(
        server, "allowedDomains",
        absl::StrCat("it is empty; a remote server is reached only at the "
                     "hosts listed there, its url's own host (",
                     *host, ") first"));
  }
  // The definition's own list first, so that the message names the field a
  // person edits; then the proxy's, which a policy may have narrowed.
  std::vector<std::string> written(d.allowed_domains().begin(),
                                   d.allowed_domains().end());
  absl::StatusOr<netproxy::DomainRules> listed =
      netproxy::DomainRules::Create(written, {});
  if (!listed.ok())
    return NotConnected(server, "allowedDomains", listed.status().message());
  if (listed->Check(*host) != netproxy::DomainRules::Verdict::kAllowed) {
    return NotConnected(
        server, "allowedDomains",
        absl::StrCat("its url's host ", *host, " is not listed there (",
                     absl::StrJoin(written, ", "), ")"));
  }

  auto proxy = std::make_unique<Proxy>();
  proxy->definition = d;
  ASSIGN_OR_RETURN(proxy->started, host_->StartProxy(server));
  ASSIGN_OR_RETURN(netproxy::DomainRules kept,
                   netproxy::DomainRules::Create(proxy->started.allowed, {}));
  if (kept.Check(*host) != netproxy::DomainRules::Verdict::kAllowed) {
    return NotConnected(
        server, "allowedDomains",
        absl::StrCat("its url's host ", *host,
                     " is not let through: ", proxy->started.network));
  }

  // The listener the proxy accepts on, as a sandbox's loopback one.
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener) return LastErrnoStatus("socket for an MCP server's proxy");
  unsigned char random[16];
  if (::getrandom(random, sizeof random, 0) != sizeof random) {
    return LastErrnoStatus("getrandom for an MCP server's proxy");
  }
  const std::string name =
      absl::StrCat("garuda-mcp-",
                   absl::BytesToHexString(absl::string_view(
                       reinterpret_cast<const char*>(random), sizeof random)));
  proxy->address = absl::StrCat(std::string(1, '\0'), name);
  sockaddr_un address = {};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, proxy->address.data(), proxy->address.size());
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&address),
             static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) +
                                    proxy->address.size())) != 0 ||
      ::listen(listener.get(), 64) != 0) {
    return LastErrnoStatus("listen for an MCP server's proxy");
  }
  const int fd = listener.get();
  const char byte = 'L';
  if (ipc::SendWithDescriptors(proxy->started.attached->handoff_fd(), &byte, 1,
                               absl::MakeConstSpan(&fd, 1)) != 1) {
    return LastErrnoStatus(
        absl::StrCat("hand MCP server \"", server.name(),
                     "\"'s listener to its proxy (is it gone?)"));
  }
  return proxy;
}

absl::Status McpRemote::Connect(const McpServer& server,
                                stager::McpProxyConnected* reply) {
  if (server.definition().url().empty()) {
    return NotConnected(server, "url",
                        "it has none (a stdio server is started, with "
                        "StartMcpServer, not connected)");
  }
  auto it = proxies_.find(server.name());
  // A changed definition, or a proxy that died, gets a new one.
  if (it == proxies_.end() ||
      !google::protobuf::util::MessageDifferencer::Equals(
          it->second->definition, server.definition()) ||
      !it->second->started.proxy->CheckAlive().ok()) {
    if (it != proxies_.end()) proxies_.erase(it);
    ASSIGN_OR_RETURN(std::unique_ptr<Proxy> started, Start(server));
    it = proxies_.emplace(server.name(), std::move(started)).first;
  }
  const Proxy& proxy = *it->second;
  reply->set_name(server.name());
  reply->set_network(proxy.started.network);
  reply->set_address(proxy.address);
  return absl::OkStatus();
}

}  // namespace garuda
