#include "lib/lockdown/proxy_lockdown.h"

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lib/lockdown/lockdown.h"

namespace garuda {

absl::Status LockDownProxy(const ProxyLockdownOptions& options) {
  LockdownOptions lockdown;
  lockdown.role = "proxy";
  // No writable path: Landlock then refuses every write, create, remove and
  // rename on every file system.
  lockdown.writable_paths = {};
  lockdown.allow_network = true;
  std::vector<int> ports(options.connect_ports.begin(),
                         options.connect_ports.end());
  // TCP 53 too: the resolver falls back to TCP for a long answer. An
  // empty list of allowed ports otherwise denies all TCP.
  ports.push_back(53);
  lockdown.tcp_connect_ports = ports;
  if (!options.accept_weaker_lockdown.empty()) {
    lockdown.accept_weaker = AcceptWeakerLockdown{options.accept_weaker_lockdown};
  }
  absl::StatusOr<LockdownReport> report = LockDown(lockdown);
  if (!report.ok()) {
    return absl::Status(report.status().code(),
                        absl::StrCat("cannot lock down the network proxy: ",
                                     report.status().message(),
                                     " (--accept-weaker-lockdown=WHY runs anyway)"));
  }
  if (!report->weaker.empty() && options.log) {
    options.log(absl::StrCat("weaker lockdown: ", report->weaker));
  }
  return absl::OkStatus();
}

}  // namespace garuda
