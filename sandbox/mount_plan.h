// The new root of a sandbox as a list of steps, made on the host from a
// policy (so it can be checked without namespaces) and applied in the child
// inside its new user and mount namespaces.
#ifndef GARUDA_SANDBOX_MOUNT_PLAN_H_
#define GARUDA_SANDBOX_MOUNT_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/sandbox_policy.pb.h"

namespace garuda {

class PrivateWalk;
class StoredWalk;

struct MountStep {
  enum class Kind {
    kBind,  // source bound at target, read-only unless writable
    // `target` (relative) opened beneath the folder `source` without
    // following a link, in the child, and the folder or file opened bound
    // at source/target: what is bound is what was checked.
    kBindBeneath,
    kSymlink,   // a link at target pointing to source (/bin -> usr/bin)
    kTmpfs,     // an empty writable tmpfs (the private /tmp)
    kProc,      // a new /proc of the sandbox's PID namespace
    kDev,       // a minimal /dev
    kDenyDir,   // an empty read-only tmpfs nobody may open
    kDenyFile,  // an empty read-only file nobody may open
  };
  Kind kind;
  std::string source;
  std::string target;
  bool writable = false;
  uint64_t size_bytes = 0;  // kTmpfs and kDev's /dev/shm: 0 the default
};

struct MountPlan {
  std::vector<MountStep> steps;
  // Where the command may write (Landlock): the project when writable,
  // writable paths and binds, the private /tmp and /dev.
  std::vector<std::string> writable;
  std::string working_directory;
};

// Checks the policy against the host's file system and orders the steps:
// system paths, /proc, /dev, /tmp, the project, its pinned and read-only
// paths, writable paths, binds, denied paths last so that they win. A
// writable path, pinned or read-only project path is opened beneath its
// base without following links; a writable path or bind source that does
// not exist, any of them reached through a symbolic link, or a denied path
// reached through one, is an error naming it. With the network off, nothing
// under /run is bound (host sockets such as the DNS resolver's live there).
// The policy's denied paths as they are on this host: project-relative ones
// made absolute, absolute patterns expanded by glob(3) (a match that is a
// symbolic link is left out: its target is matched on its own, or is not
// in the sandbox), and every file or folder under deny_private_under that
// others may not read. For BuildMountPlan and bubblewrap's arguments.
// Where the answer for denyPrivateUnder comes from: `kept`, the walk kept
// in memory between the runs of a process that starts many
// (sandbox/private_walk.h); else `stored`, the walk kept on disk between
// processes (sandbox/stored_walk.h; null: StoredWalk::ForThisMachine()).
struct PrivateWalkSource {
  PrivateWalk* kept = nullptr;
  const StoredWalk* stored = nullptr;
};
absl::StatusOr<std::vector<std::string>> ExpandDeniedPaths(
    const SandboxPolicy& policy, const std::string& project,
    PrivateWalkSource walk = {});
// The plan also hides the stored walk's folder wherever a bind would show
// it: it names what is hidden, with inodes and change times.
absl::StatusOr<MountPlan> BuildMountPlan(const SandboxPolicy& policy,
                                         PrivateWalkSource walk = {});

// Inside the child, in its own user and mount namespaces: builds the new
// root from `plan` on a private tmpfs and pivots into it. The host's tree is
// no longer reachable afterwards.
absl::Status ApplyMountPlan(const MountPlan& plan);

}  // namespace garuda

#endif  // GARUDA_SANDBOX_MOUNT_PLAN_H_
