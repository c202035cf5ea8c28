#include "lib/lockdown/proxy_lockdown.h"

#include <vector>

namespace garuda {

absl::Status LockDownProxy(const ProxyLockdown& what, LockdownReport* report) {
  LockdownOptions options;
  options.role = "proxy";
  // No writable path: Landlock then refuses every write, create, remove and
  // rename on every file system.
  options.writable_paths = {};
  options.allow_network = true;
  std::vector<int> ports(what.connect_ports.begin(), what.connect_ports.end());
  // TCP 53 too: the resolver falls back to TCP for a long answer.
  ports.push_back(53);
  options.tcp_connect_ports = ports;
  return TakeRoleLockdown(what, options, report);
}

}  // namespace garuda
