#include "lib/staging/network_start.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/status_macros.h"
#include "lib/netproxy/start_check.h"

namespace garuda {

void AddNetworkEvents(const MergedSettings& settings,
                      std::vector<proxy::NetworkEvent> events,
                      stager::CommandResult* result) {
  for (proxy::NetworkEvent& event : events) {
    if (event.allowed() && !settings.settings.sandbox().audit_allowed_hosts()) {
      continue;
    }
    *result->add_network_events() = std::move(event);
  }
}

absl::StatusOr<std::unique_ptr<netproxy::SessionProxy>> StartSessionProxy(
    const MergedSettings& settings, const std::string& project,
    const std::string& self, std::vector<std::string>* notices) {
  if (settings.network_access != NetworkAccess::kAllowList) return nullptr;
  ASSIGN_OR_RETURN(std::unique_ptr<netproxy::SessionProxy> proxy,
                   netproxy::SessionProxy::Start(settings, self, ""));
  const SandboxSettings& sandbox = settings.settings.sandbox();
  std::string line = absl::StrCat(
      "network: only ", absl::StrJoin(sandbox.allowed_domains(), ", "),
      " (sandbox.allowedDomains), ports ",
      absl::StrJoin(sandbox.allowed_ports(), ", "),
      ", through the session's proxy");
  if (sandbox.allowed_domains().empty()) {
    line = "network: sandbox.allowedDomains allows no host after the merge "
           "(every request is refused)";
  }
  if (settings.strict()) {
    RETURN_IF_ERROR(
        netproxy::ProveNetworkEnforcement(settings, project, proxy.get()));
    absl::StrAppend(&line, "; enforcement proven at start (strict)");
  }
  notices->push_back(line);
  return proxy;
}

}  // namespace garuda
