// One call each program makes after it has opened what its role needs and
// before it serves: no_new_privs, Landlock for writes, the role's seccomp
// filter. See docs/lockdown.md for what each role may do.
#ifndef GARUDA_LIB_LOCKDOWN_LOCKDOWN_H_
#define GARUDA_LIB_LOCKDOWN_LOCKDOWN_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace garuda {

// The lowest Landlock ABI LockDown accepts without AcceptWeakerLockdown.
// ABI 1 (Linux 5.13) already confines every create, write, remove and
// rename; what the later ones add is listed by LandlockGaps().
constexpr int kLockdownMinLandlockAbi = 1;

// Weakening the lockdown needs this explicit token, so it stands out in
// review.
struct AcceptWeakerLockdown {
  std::string why;
};

// A role that leaves Landlock out by design, with the reason (kept in
// LockdownReport::weaker). A Landlock domain forbids mount(2) and
// pivot_root(2) to the process and to everything it starts, so a process
// that still builds sandboxes (garuda-stager) cannot have one.
struct WithoutLandlock {
  std::string why;
};

struct LockdownOptions {
  // "auditor", "applier", "budgeter", "stager", "agent": the seccomp policy
  // policies/seccomp/<role>.json (compiled in).
  std::string role;
  // Landlock: file writes, creates, removes and renames are allowed only
  // beneath these (absolute, existing) paths.
  std::vector<std::string> writable_paths;
  // false: no AF_INET, AF_INET6, AF_NETLINK... sockets (AF_UNIX only).
  bool allow_network = false;
  // With allow_network: TCP connect only to these ports and no TCP bind,
  // where Landlock handles TCP (ABI 4, Linux 6.7); below, the seccomp filter
  // is the only network wall and LockdownReport::tcp_ports_enforced is
  // false. Unset: TCP is not limited by port.
  std::optional<std::vector<int>> tcp_connect_ports;
  // Without it a kernel without Landlock (or without seccomp) is an error.
  std::optional<AcceptWeakerLockdown> accept_weaker;
  // Set: no Landlock step at all (writable_paths must be empty), whatever
  // the kernel has.
  std::optional<WithoutLandlock> without_landlock;
};

struct LockdownReport {
  int landlock_abi = 0;  // 0: no Landlock
  bool landlock_enforced = false;
  bool seccomp_enforced = false;
  // LockdownOptions::tcp_connect_ports is held by the kernel.
  bool tcp_ports_enforced = false;
  // Empty, or what is missing (and why it was accepted, or why the role
  // goes without by design).
  std::string weaker;
  // Less than the role's lockdown was applied because the caller accepted
  // it (AcceptWeakerLockdown), not by the role's design.
  bool weaker_accepted = false;
  // The TCP ports the process may still connect to (tcp_connect_ports).
  std::vector<int> tcp_ports;
  // One line for a person, filled by lib/lockdown/roles.h's LockDownAs:
  // "agent locked down: ... (Landlock ABI 6, seccomp)".
  std::string summary;
};

// Irreversible for this process and every process it starts afterwards
// (helpers must be started before). It must run while the process has one
// thread: Landlock restricts only the calling thread, so LockDown refuses
// (FAILED_PRECONDITION) when /proc/self/task lists more than one.
absl::StatusOr<LockdownReport> LockDown(const LockdownOptions& options);

namespace lockdown_internal {
// LockDown with the Landlock ABI probe replaced, so a test can act out a
// kernel without Landlock.
using LandlockAbiProbe = std::function<absl::StatusOr<int>()>;
absl::StatusOr<LockdownReport> LockDownWithProbe(const LockdownOptions& options,
                                                 const LandlockAbiProbe& probe);
}  // namespace lockdown_internal

}  // namespace garuda

#endif  // GARUDA_LIB_LOCKDOWN_LOCKDOWN_H_
