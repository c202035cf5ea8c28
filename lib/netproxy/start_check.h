// The strict profile's proof at session start (issue 21, point 3): with an
// allow list, a canary in a real sandbox of the session's kind shows that
//   - the proxy answers on the sandbox's loopback, and refuses a host
//     outside sandbox.allowedDomains with its 403;
//   - a TCP connection that bypasses the proxy (a direct IPv4 or IPv6
//     address) is refused at once: the sandbox has no route out;
//   - UDP out (DNS to 1.1.1.1) fails the same way;
//   - raw IP and packet sockets cannot be made.
// Any of these not holding is an error with every reason, and the session
// does not start.
#ifndef GARUDA_LIB_NETPROXY_START_CHECK_H_
#define GARUDA_LIB_NETPROXY_START_CHECK_H_

#include <string>

#include "absl/status/status.h"
#include "lib/netproxy/session_proxy.h"
#include "lib/policy/merge.h"

namespace garuda {
namespace netproxy {

// The host the canary asks for; never in an allow list (checked).
inline constexpr char kStartCheckHost[] = "garuda-start-check.invalid";

absl::Status ProveNetworkEnforcement(const MergedSettings& settings,
                                     const std::string& project,
                                     SessionProxy* proxy);

}  // namespace netproxy
}  // namespace garuda

#endif  // GARUDA_LIB_NETPROXY_START_CHECK_H_
