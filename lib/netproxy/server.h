// The network proxy of sandboxed commands (issue 21): the only way out for a
// command whose settings list allowed domains. It answers HTTP CONNECT,
// plain HTTP in absolute form and SOCKS5 CONNECT on a listening socket (a
// Unix socket bound into the sandbox), checks the host the client names
// against the lists before resolving it, connects only to allowed ports,
// and refuses everything else with a reason the command's output shows.
#ifndef GARUDA_LIB_NETPROXY_SERVER_H_
#define GARUDA_LIB_NETPROXY_SERVER_H_

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "lib/base/unique_fd.h"
#include "lib/rules/domain_rules.h"

namespace garuda {
namespace netproxy {

struct ProxyEvent {
  std::string host;
  uint16_t port = 0;
  bool allowed = false;
  // For a refusal: "not in sandbox.allowedDomains", "in
  // sandbox.deniedDomains", "port 22 is not in sandbox.allowedPorts", ...
  std::string why;
};

struct ProxyOptions {
  DomainRules rules;
  std::set<uint16_t> allowed_ports = {80, 443};
  // A test seam: names that resolve to these addresses ("127.0.0.1") without
  // a resolver. Production leaves it empty.
  std::map<std::string, std::string> test_name_map;
  // Every decision, from the connection's thread (the caller audits
  // refusals; allowed ones optionally).
  std::function<void(const ProxyEvent&)> on_event;
  // Connections served at once; more wait in the listen queue.
  int max_connections = 256;
  // A test seam (GARUDA_TEST_PROXY_ALLOW_EVERYTHING): every host passes the
  // lists, so that a test can show the strict start check catches a proxy
  // that lets everything through. Never set in production.
  bool test_allow_everything = false;
};

class ProxyServer {
 public:
  explicit ProxyServer(ProxyOptions options);

  // Accepts on `listen_fd` until Stop() (from another thread) or an error;
  // each connection is served on a thread of its own. Returns once every
  // connection's thread has ended.
  absl::Status Serve(int listen_fd);
  // Ends Serve: no new connection, and the open ones are shut down.
  void Stop();

  // The body of a 403 for a refused host: names the host and the setting.
  static std::string RefusalText(const ProxyEvent& event);

 private:
  void ServeConnection(int client_fd);
  // After the checks: a connected socket to host:port, or the refusal.
  absl::StatusOr<int> ConnectUpstream(const std::string& host, uint16_t port,
                                      ProxyEvent* event);
  bool Check(const std::string& host, uint16_t port, ProxyEvent* event);

  // The sockets of open connections, so that Stop can end them.
  void Track(int fd);
  void Untrack(int fd);

  ProxyOptions options_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::condition_variable idle_;
  int active_ = 0;
  std::set<int> open_fds_;
  // Readable once Stop() was called: Serve's poll wakes at once.
  UniqueFd wake_;
};

}  // namespace netproxy
}  // namespace garuda

#endif  // GARUDA_LIB_NETPROXY_SERVER_H_
