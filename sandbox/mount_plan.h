// The new root of a sandbox as a list of steps, made on the host from a
// policy (so it can be checked without namespaces) and applied in the child
// inside its new user and mount namespaces.
#ifndef GARUDA_SANDBOX_MOUNT_PLAN_H_
#define GARUDA_SANDBOX_MOUNT_PLAN_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/sandbox_policy.pb.h"

namespace garuda {

struct MountStep {
  enum class Kind {
    kBind,      // source bound at target, read-only unless writable
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
};

struct MountPlan {
  std::vector<MountStep> steps;
  // Where the command may write (Landlock): the project when writable,
  // writable paths and binds, the private /tmp and /dev.
  std::vector<std::string> writable;
  std::string working_directory;
};

// Checks the policy against the host's file system and orders the steps:
// system paths, /proc, /dev, /tmp, the project, writable paths, binds,
// denied paths last so that they win. Paths are made absolute and free of
// symbolic links; a writable path or bind source that does not exist, or a
// denied path reached through a symbolic link, is an error naming it.
absl::StatusOr<MountPlan> BuildMountPlan(const SandboxPolicy& policy);

// Inside the child, in its own user and mount namespaces: builds the new
// root from `plan` on a private tmpfs and pivots into it. The host's tree is
// no longer reachable afterwards.
absl::Status ApplyMountPlan(const MountPlan& plan);

}  // namespace garuda

#endif  // GARUDA_SANDBOX_MOUNT_PLAN_H_
