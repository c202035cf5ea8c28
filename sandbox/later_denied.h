// The paths that deny_private_under hides are found by walking the host's
// folders (about 2.5 ms for /etc on the development VM, as long as PID 1's
// whole setup). RunInSandbox walks after the clone, while PID 1 builds the
// rest of the root, and hands PID 1 the steps over a socket; PID 1 applies
// them after the plan's own steps and only then seals the root and starts
// anything (sandbox/mount_plan.h, PrivatePaths::kSentLater).
#ifndef GARUDA_SANDBOX_LATER_DENIED_H_
#define GARUDA_SANDBOX_LATER_DENIED_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/sandbox_policy.pb.h"
#include "sandbox/mount_plan.h"

namespace garuda {

// The steps that hide what deny_private_under finds, for a plan built with
// PrivatePaths::kSentLater: a path the plan denies already, or one inside a
// path it denies, is left out (it would need a mount point in a folder
// nobody may open). A path that contains one the plan denies is kept: its
// mount, made later, covers that one's.
absl::StatusOr<std::vector<MountStep>> PrivateDenySteps(
    const SandboxPolicy& policy, const MountPlan& plan,
    PrivateWalk* private_walk);

// Writes `steps` to `fd` and the end marker after them.
absl::Status SendDenySteps(int fd, const std::vector<MountStep>& steps);
// Reads what SendDenySteps wrote, up to its end marker: end of file before
// the marker (the supervisor failed or gave up) is an error, never a
// shorter list.
absl::StatusOr<std::vector<MountStep>> ReceiveDenySteps(int fd);

}  // namespace garuda

#endif  // GARUDA_SANDBOX_LATER_DENIED_H_
