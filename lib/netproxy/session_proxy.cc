#include "lib/netproxy/session_proxy.h"

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace netproxy {

absl::StatusOr<std::unique_ptr<SessionProxy>> SessionProxy::Start(
    const MergedSettings& settings, const std::string& self,
    const std::string& accept_weaker_lockdown) {
  ipc::HelperOptions helper;
  helper.argv = {self, "proxy", "--channel-fd=3"};
  if (!accept_weaker_lockdown.empty()) {
    helper.argv.push_back(
        absl::StrCat("--accept-weaker-lockdown=", accept_weaker_lockdown));
  }
  helper.channel.peer_name = "garuda-stager proxy";
  // A Ctrl-C for the agent's terminal is not the proxy's business: it ends
  // with the stager.
  helper.new_process_group = true;
  ASSIGN_OR_RETURN(std::unique_ptr<ipc::HelperProcess> process,
                   ipc::HelperProcess::Spawn(helper));
  std::unique_ptr<SessionProxy> proxy(new SessionProxy(std::move(process)));
  proxy::ProxyServiceRequest request;
  proxy::Configure* configure = request.mutable_configure();
  const SandboxSettings& sandbox = settings.settings.sandbox();
  for (const std::string& entry : sandbox.allowed_domains()) {
    configure->add_allowed_domains(entry);
  }
  for (const std::string& entry : sandbox.denied_domains()) {
    configure->add_denied_domains(entry);
  }
  for (uint32_t port : sandbox.allowed_ports()) configure->add_allowed_ports(port);
  absl::StatusOr<proxy::ProxyServiceReply> reply =
      proxy->client_.Call(request);
  if (!reply.ok()) {
    return absl::Status(reply.status().code(),
                        absl::StrCat("the network proxy did not start: ",
                                     reply.status().message()));
  }
  return proxy;
}

absl::StatusOr<std::unique_ptr<SessionProxy::Run>> SessionProxy::Begin() {
  ASSIGN_OR_RETURN(auto pair, ipc::MakeSocketPair());
  uint64_t id = next_id_++;
  proxy::ProxyServiceRequest request;
  request.mutable_attach()->set_command(id);
  int proxy_end = pair.first.get();
  ASSIGN_OR_RETURN(proxy::ProxyServiceReply reply,
                   client_.Call(request, nullptr, {&proxy_end, 1}));
  (void)reply;
  return std::unique_ptr<Run>(new Run(this, id, std::move(pair.second)));
}

absl::StatusOr<std::vector<proxy::NetworkEvent>> SessionProxy::Run::End() {
  ended_ = true;
  sandbox_end_.Reset();
  proxy::ProxyServiceRequest request;
  request.mutable_detach()->set_command(id_);
  ASSIGN_OR_RETURN(proxy::ProxyServiceReply reply,
                   proxy_->client_.Call(request));
  return std::vector<proxy::NetworkEvent>(reply.detached().events().begin(),
                                          reply.detached().events().end());
}

SessionProxy::Run::~Run() {
  if (!ended_) End().IgnoreError();
}

std::vector<std::string> RefusalLines(
    const google::protobuf::RepeatedPtrField<proxy::NetworkEvent>& events) {
  std::vector<std::string> lines;
  for (const proxy::NetworkEvent& event : events) {
    if (event.allowed()) continue;
    std::string host = event.host();
    if (event.port() != 80 && event.port() != 443) {
      absl::StrAppend(&host, ":", event.port());
    }
    lines.push_back(absl::StrCat("network: refused ", host, " (", event.why(),
                                 ")"));
  }
  return lines;
}

}  // namespace netproxy
}  // namespace garuda
