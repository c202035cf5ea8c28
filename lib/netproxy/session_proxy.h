// The stager's side of the session's network proxy (issue 21): starts
// `garuda-stager proxy` before the stager locks down, configures it with the
// merged lists, and attaches each command's sandbox to it around the run.
#ifndef GARUDA_LIB_NETPROXY_SESSION_PROXY_H_
#define GARUDA_LIB_NETPROXY_SESSION_PROXY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/client.h"
#include "lib/ipc/helper_process.h"
#include "lib/policy/merge.h"
#include "proto/netproxy_service.pb.h"

namespace garuda {
namespace netproxy {

class SessionProxy {
 public:
  // Starts `self proxy --channel-fd=3` and sends it the lists of
  // `settings` (whose network access must be the allow list).
  static absl::StatusOr<std::unique_ptr<SessionProxy>> Start(
      const MergedSettings& settings, const std::string& self,
      const std::string& accept_weaker_lockdown);

  // One run: Begin gives the descriptor for RunOptions::proxy_handoff_fd
  // (the sandbox's end of the hand-off socket; close it after the run), End
  // detaches and returns what the command asked for.
  class Run {
   public:
    int handoff_fd() const { return sandbox_end_.get(); }
    absl::StatusOr<std::vector<proxy::NetworkEvent>> End();
    ~Run();

   private:
    friend class SessionProxy;
    Run(SessionProxy* proxy, uint64_t id, UniqueFd sandbox_end)
        : proxy_(proxy), id_(id), sandbox_end_(std::move(sandbox_end)) {}
    SessionProxy* proxy_;
    uint64_t id_;
    UniqueFd sandbox_end_;
    bool ended_ = false;
  };
  absl::StatusOr<std::unique_ptr<Run>> Begin();

  // The proxy's process (for the benchmark's memory figure).
  pid_t pid() const { return process_->pid(); }

  // The proxy's death, if it died (UNAVAILABLE with how).
  absl::Status CheckAlive() { return process_->CheckAlive(); }

 private:
  using Client =
      ipc::Client<proxy::ProxyServiceRequest, proxy::ProxyServiceReply>;
  explicit SessionProxy(std::unique_ptr<ipc::HelperProcess> process)
      : process_(std::move(process)),
        client_(process_.get(), "garuda-stager proxy") {}

  std::unique_ptr<ipc::HelperProcess> process_;
  Client client_;
  uint64_t next_id_ = 1;
};

// Calls `run` (a run of the sandbox that reads `*handoff_fd`, normally
// &RunOptions::proxy_handoff_fd) with `proxy` attached when there is one,
// and puts what the command asked for in `events`. Without a proxy it only
// calls `run`.
template <typename Run>
auto RunAttached(SessionProxy* proxy, int* handoff_fd,
                 std::vector<proxy::NetworkEvent>* events, Run&& run)
    -> decltype(run()) {
  if (proxy == nullptr) return run();
  absl::StatusOr<std::unique_ptr<SessionProxy::Run>> attached = proxy->Begin();
  if (!attached.ok()) return attached.status();
  *handoff_fd = (*attached)->handoff_fd();
  auto result = run();
  *handoff_fd = -1;
  absl::StatusOr<std::vector<proxy::NetworkEvent>> asked = (*attached)->End();
  if (!asked.ok()) return asked.status();
  *events = *std::move(asked);
  return result;
}

// The lines a person and the model read after the command's output, one
// per refused host: "network: refused example.com (not in
// sandbox.allowedDomains)".
std::vector<std::string> RefusalLines(
    const google::protobuf::RepeatedPtrField<proxy::NetworkEvent>& events);

}  // namespace netproxy
}  // namespace garuda

#endif  // GARUDA_LIB_NETPROXY_SESSION_PROXY_H_
