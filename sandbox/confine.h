// The last steps in the command's own process, after the new root is built
// and before execve: no capabilities, no_new_privs, rlimits, Landlock for
// writes, the seccomp filter. Each returns an error rather than going on
// with a weaker wall.
#ifndef GARUDA_SANDBOX_CONFINE_H_
#define GARUDA_SANDBOX_CONFINE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/sandbox_policy.pb.h"

namespace garuda {

// Empties the bounding, ambient, effective, permitted and inheritable sets
// and locks root's special treatment off, so that no execve (setuid files,
// file capabilities, uid 0) can give a capability back.
absl::Status DropCapabilities();

// CPU time, memory, processes and file size from the policy (0: unchanged).
absl::Status SetResourceLimits(const Limits& limits);

// no_new_privs, Landlock (writes only beneath `writable`; fails when the
// kernel's ABI is below `min_landlock_abi` or 1), then the seccomp filter
// of `seccomp_role` (network decides the socket families). Must be the last
// step before execve.
absl::Status ConfineCommand(const std::vector<std::string>& writable,
                            const SandboxPolicy& policy);

}  // namespace garuda

#endif  // GARUDA_SANDBOX_CONFINE_H_
