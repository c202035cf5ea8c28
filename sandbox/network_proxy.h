// The sandbox's side of the network by allow-list (docs/network.md): the
// command keeps its own network namespace with only loopback, and PID 1
// makes a listening TCP socket on 127.0.0.1:<port> there and hands it, over
// a Unix socket, to the session's proxy outside (lib/netproxy). The proxy
// accepts the command's connections on it directly: no socket file is bound
// into the sandbox, no forwarder runs in it, and the proxy never listens on
// the host's network.
#ifndef GARUDA_SANDBOX_NETWORK_PROXY_H_
#define GARUDA_SANDBOX_NETWORK_PROXY_H_

#include <cstdint>

#include "absl/status/status.h"
#include "proto/sandbox_policy.pb.h"

namespace garuda {

// The proxy's port on every sandbox's own loopback.
inline constexpr uint32_t kSandboxProxyPort = 3128;

// A policy with network_proxy needs the hand-off socket, and the full
// network (network true) and the proxy exclude each other.
absl::Status CheckNetworkProxy(const SandboxPolicy& policy, int handoff_fd);

// In PID 1, after loopback is up: the listener, sent on `handoff_fd`
// (SCM_RIGHTS) and closed here, and `handoff_fd` closed too. Safe: the
// socket belongs to the sandbox's own network namespace, so it can only ever
// accept what a process of this sandbox connects; the proxy holding it
// cannot reach into the sandbox any other way.
absl::Status HandOverLoopbackListener(int handoff_fd, uint32_t port);

// HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (socks5h: names resolved by the proxy)
// and their lower-case names, pointing at 127.0.0.1:<port>; NO_PROXY for
// the sandbox's own loopback.
void SetProxyEnvironment(uint32_t port, SandboxPolicy* policy);

}  // namespace garuda

#endif  // GARUDA_SANDBOX_NETWORK_PROXY_H_
