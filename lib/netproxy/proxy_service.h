// `garuda-stager proxy`: the network proxy of one session (issue 21,
// docs/network.md), started by the stager on a socketpair
// (proto/netproxy_service.proto). Its steps:
//   1. read Configure (the merged lists) from the stager;
//   2. lock down (lib/lockdown/roles.h, Role::kProxy): no writes anywhere, no
//      exec, no new process, no bind or listen, TCP connects only to the
//      allowed ports where Landlock can;
//   3. serve Attach / Detach: for each command's sandbox, the listening
//      socket its PID 1 made on the sandbox's loopback arrives on the
//      attached Unix socket, and the proxy answers the command's
//      connections on it (lib/netproxy/server.h) until Detach, which
//      returns every host the command asked for.
// It never reads a file of the project or writes one anywhere: a bug in it
// can at worst connect to an allowed port.
#ifndef GARUDA_LIB_NETPROXY_PROXY_SERVICE_H_
#define GARUDA_LIB_NETPROXY_PROXY_SERVICE_H_

#include <functional>
#include <map>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "lib/lockdown/roles.h"

namespace garuda {
namespace netproxy {

// The test seams, read from the environment by the proxy process only:
//   GARUDA_TEST_PROXY_NAME_MAP="allowed.test=127.0.0.1,denied.test=127.0.0.1"
//     names that resolve to these addresses without a resolver;
//   GARUDA_TEST_PROXY_ALLOW_EVERYTHING=1 every host passes the lists.
inline constexpr char kTestNameMapVariable[] = "GARUDA_TEST_PROXY_NAME_MAP";
inline constexpr char kTestAllowEverythingVariable[] =
    "GARUDA_TEST_PROXY_ALLOW_EVERYTHING";

struct ProxyProcessOptions {
  int channel_fd = -1;
  // LockDownAs(Role::kProxy) from cmd/garuda-stager/main.cc, taken with the
  // allowed ports of Configure (known only once it has come); empty: the
  // process does not serve.
  LockDownCall lock_down;
};

// Serves until the stager closes the channel (OK) or breaks the protocol.
absl::Status RunProxyProcess(const ProxyProcessOptions& options);

// "a=1.2.3.4,b=::1" as a map; entries without '=' are skipped.
std::map<std::string, std::string> ParseNameMap(const std::string& text);

}  // namespace netproxy
}  // namespace garuda

#endif  // GARUDA_LIB_NETPROXY_PROXY_SERVICE_H_
