// The stager's start of the session's network proxy (issue 21): with an
// allow list, `garuda-stager proxy` is started (before the stager locks
// down) and, under the strict profile, its enforcement is proven in a
// sandbox (lib/netproxy/start_check.h) or the session does not start.
#ifndef GARUDA_LIB_STAGING_NETWORK_START_H_
#define GARUDA_LIB_STAGING_NETWORK_START_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/netproxy/session_proxy.h"
#include "lib/policy/merge.h"
#include "proto/stager_service.pb.h"

namespace garuda {

// The events of one run into its reply: refused hosts always, allowed ones
// with sandbox.auditAllowedHosts.
void AddNetworkEvents(const MergedSettings& settings,
                      std::vector<proxy::NetworkEvent> events,
                      stager::CommandResult* result);

// nullptr when the settings have no allow list. A line for the session's
// first lines goes to `notices`.
absl::StatusOr<std::unique_ptr<netproxy::SessionProxy>> StartSessionProxy(
    const MergedSettings& settings, const std::string& project,
    const std::string& self, std::vector<std::string>* notices);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_NETWORK_START_H_
