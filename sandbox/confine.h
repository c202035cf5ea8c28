// The last steps in the command's own process, after the new root is built
// and before execve: no capabilities, no_new_privs, rlimits, Landlock for
// writes, the seccomp filter. Each returns an error rather than going on
// with a weaker wall.
#ifndef GARUDA_SANDBOX_CONFINE_H_
#define GARUDA_SANDBOX_CONFINE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/lockdown/seccomp_filter.h"
#include "proto/sandbox_policy.pb.h"

namespace garuda {

// Empties the bounding, ambient, effective, permitted and inheritable sets
// and locks root's special treatment off, so that no execve (setuid files,
// file capabilities, uid 0) can give a capability back.
absl::Status DropCapabilities();

// CPU time, memory, processes and file size from the policy (0: unchanged).
absl::Status SetResourceLimits(const Limits& limits);

// What the command's last steps need, prepared by the supervisor before the
// child exists, so that a bad filter is an error before anything starts and
// the child does no parsing.
struct Confinement {
  std::vector<std::string> writable;  // Landlock: writes only beneath these
  int min_landlock_abi = 1;
  bool network = false;  // off: Landlock also refuses TCP (ABI 4 and later)
  // With network off: the one TCP port the command may still connect to
  // (the proxy on its loopback); 0: none.
  int tcp_connect_port = 0;
  // The seccomp filter compiled to BPF by libseccomp in the supervisor, so
  // that the command's process only hands it to the kernel: no libseccomp
  // work (allocations, copy-on-write faults) after the fork.
  std::string seccomp_bpf;
};

// The seccomp filter of the policy's role ("command" by default; the
// network decides the socket families) and its Landlock minimum (at least
// 1: a kernel without Landlock fails closed).
absl::StatusOr<Confinement> PrepareConfinement(
    const SandboxPolicy& policy, std::vector<std::string> writable);

// no_new_privs, Landlock, then the seccomp filter. Must be the last step
// before execve.
absl::Status ConfineCommand(Confinement& confinement);

}  // namespace garuda

#endif  // GARUDA_SANDBOX_CONFINE_H_
