// `garuda-stager proxy`: the network proxy of one session (issue 21,
// docs/network.md), started by the stager on a socketpair
// (proto/netproxy_service.proto). Its steps, in cmd/garuda-stager's main.cc:
//   1. ProxyProcess::Open reads Configure (the merged lists, and so the
//      ports) from the stager;
//   2. main.cc locks down (LockDownAs(Role::kProxy, Needs())): no writes
//      anywhere, no exec, no new process, no bind or listen, TCP connects
//      only to the allowed ports where Landlock can;
//   3. Serve answers Configure and serves Attach / Detach: for each command's sandbox, the listening
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

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/channel.h"
#include "lib/ipc/dispatcher.h"
#include "lib/lockdown/roles.h"
#include "lib/netproxy/server.h"
#include "proto/netproxy_service.pb.h"

namespace garuda {
namespace netproxy {

// The test seams, read from the environment by the proxy process only:
//   GARUDA_TEST_PROXY_NAME_MAP="allowed.test=127.0.0.1,denied.test=127.0.0.1"
//     names that resolve to these addresses without a resolver;
//   GARUDA_TEST_PROXY_ALLOW_EVERYTHING=1 every host passes the lists.
inline constexpr char kTestNameMapVariable[] = "GARUDA_TEST_PROXY_NAME_MAP";
inline constexpr char kTestAllowEverythingVariable[] =
    "GARUDA_TEST_PROXY_ALLOW_EVERYTHING";

// The proxy process once its first message, Configure, has come (or the
// stager closed the channel before it: then there is nothing to serve).
class ProxyProcess {
 public:
  // Reads Configure on `channel_fd`; an error for any other first request
  // (answered, then the channel ends) or a broken channel. Makes no thread:
  // the lockdown comes next.
  static absl::StatusOr<std::unique_ptr<ProxyProcess>> Open(int channel_fd);
  ~ProxyProcess();

  // What its lockdown leaves it: TCP to Configure's ports (53 is the role's).
  RoleNeeds Needs() const;

  // Answers Configure (only now, so that a stager that hears "configured"
  // has a locked-down proxy), then serves Attach and Detach until the
  // stager closes the channel (OK) or breaks the protocol.
  absl::Status Serve();

 private:
  class Attachment;
  explicit ProxyProcess(ipc::Channel channel);
  absl::Status ReadConfigure();
  absl::Status OnConfigure(const proxy::Configure& configure,
                           proxy::ProxyServiceReply* reply);
  absl::Status OnAttach(uint64_t id, std::vector<UniqueFd>& fds,
                        proxy::ProxyServiceReply* reply);
  absl::Status OnDetach(uint64_t id, proxy::ProxyServiceReply* reply);

  ipc::Channel channel_;
  ipc::Dispatcher<proxy::ProxyServiceRequest, proxy::ProxyServiceReply>
      dispatcher_;
  ipc::Dispatcher<proxy::ProxyServiceRequest,
                  proxy::ProxyServiceReply>::Answer configured_;
  bool ended_ = false;
  ProxyOptions base_;
  std::map<uint64_t, std::unique_ptr<Attachment>> attached_;
};

// "a=1.2.3.4,b=::1" as a map; entries without '=' are skipped.
std::map<std::string, std::string> ParseNameMap(const std::string& text);

}  // namespace netproxy
}  // namespace garuda

#endif  // GARUDA_LIB_NETPROXY_PROXY_SERVICE_H_
