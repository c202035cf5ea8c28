// The lockdown of `garuda-stager proxy` (lib/netproxy/proxy_service.h), in
// lib/lockdown/roles.h's call shape: the "proxy" seccomp role
// (policies/seccomp/proxy.json: no exec, threads only, no bind or listen, IP
// and local sockets only) and Landlock with no writable path at all (nothing
// on disk is created, written or removed) and, where the kernel handles TCP
// (Landlock ABI 4), TCP connects only to the allowed ports (and 53, the
// resolver's TCP fallback).
#ifndef GARUDA_LIB_LOCKDOWN_PROXY_LOCKDOWN_H_
#define GARUDA_LIB_LOCKDOWN_PROXY_LOCKDOWN_H_

#include <cstdint>
#include <set>

#include "absl/status/status.h"
#include "lib/lockdown/roles.h"

namespace garuda {

struct ProxyLockdown : RoleLockdown {
  std::set<uint16_t> connect_ports;  // sandbox.allowedPorts
};

absl::Status LockDownProxy(const ProxyLockdown& what, LockdownReport* report);

}  // namespace garuda

#endif  // GARUDA_LIB_LOCKDOWN_PROXY_LOCKDOWN_H_
