// The lockdown of `garuda-stager proxy` (lib/netproxy/proxy_service.h): the
// "proxy" seccomp role (policies/seccomp/proxy.json: no exec, threads only,
// no bind or listen, IP and local sockets only) and Landlock with no
// writable path at all (nothing on disk is created, written or removed) and,
// where the kernel handles TCP (Landlock ABI 4), TCP connects only to the
// allowed ports.
#ifndef GARUDA_LIB_LOCKDOWN_PROXY_LOCKDOWN_H_
#define GARUDA_LIB_LOCKDOWN_PROXY_LOCKDOWN_H_

#include <cstdint>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "lib/lockdown/roles.h"

namespace garuda {

struct ProxyLockdownOptions {
  std::set<uint16_t> connect_ports;  // sandbox.allowedPorts
  std::string accept_weaker_lockdown;
  std::function<void(const std::string& line)> log;
};

absl::Status LockDownProxy(const ProxyLockdownOptions& options);

}  // namespace garuda

#endif  // GARUDA_LIB_LOCKDOWN_PROXY_LOCKDOWN_H_
