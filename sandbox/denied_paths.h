// The paths a sandbox hides, as they are on this host: the policy's denied
// paths (patterns expanded) and what deny_private_under finds by walking the
// host's folders.
//
// Finding them reads the host's folders (/etc three times over for the
// default patterns, and all of /etc for what others may not read: about
// 3 ms on the development VM, longer than PID 1's whole setup), so
// RunInSandbox does it after the clone, while PID 1 builds the rest of the
// root, and hands PID 1 the steps over a socket; PID 1 applies them after
// the plan's steps, last as before, and only then seals the root and starts
// anything (sandbox/mount_plan.h, DeniedPaths::kSentLater).
#ifndef GARUDA_SANDBOX_DENIED_PATHS_H_
#define GARUDA_SANDBOX_DENIED_PATHS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/sandbox_policy.pb.h"
#include "sandbox/mount_plan.h"

namespace garuda {

// The policy's denied paths as they are on this host: project-relative ones
// made absolute, absolute patterns expanded by glob(3) (a match that is a
// symbolic link is left out: its target is matched on its own, or is not
// in the sandbox), and every file or folder under deny_private_under that
// others may not read; sorted, outermost only. For bubblewrap's arguments
// and a plan with DeniedPaths::kInThePlan.
absl::StatusOr<std::vector<std::string>> ExpandDeniedPaths(
    const SandboxPolicy& policy, const std::string& project,
    PrivateWalk* private_walk = nullptr);
// The first half of that: the named paths and patterns only, unsorted.
absl::StatusOr<std::vector<std::string>> NamedDeniedPaths(
    const SandboxPolicy& policy, const std::string& project);
// An error naming a deny_private_under folder that is not absolute.
absl::Status CheckPrivateUnder(const SandboxPolicy& policy);
// Appends what deny_private_under finds on this host: every file or folder
// there that others may not read (walked afresh without `private_walk`).
void FindPrivatePaths(const SandboxPolicy& policy, PrivateWalk* private_walk,
                      std::vector<std::string>* found);
// Sorted, without repeats, and without any path inside another one of them.
std::vector<std::string> OutermostPaths(std::vector<std::string> paths);

// The steps that hide every denied path (ExpandDeniedPaths), for a plan
// built with DeniedPaths::kSentLater.
absl::StatusOr<std::vector<MountStep>> DeniedSteps(const SandboxPolicy& policy,
                                                   const MountPlan& plan,
                                                   PrivateWalk* private_walk);

// Writes `steps` to `fd` and the end marker after them.
absl::Status SendDenySteps(int fd, const std::vector<MountStep>& steps);
// Reads what SendDenySteps wrote, up to its end marker: end of file before
// the marker (the supervisor failed or gave up) is an error, never a
// shorter list.
absl::StatusOr<std::vector<MountStep>> ReceiveDenySteps(int fd);

}  // namespace garuda

#endif  // GARUDA_SANDBOX_DENIED_PATHS_H_
