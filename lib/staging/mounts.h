// The stager's own user and mount namespaces, where the staging view is
// mounted and the real project is made read-only for the stager and every
// process it starts. Nothing here needs root, and nothing reaches the
// host's mount table: the namespaces end with the stager.
#ifndef GARUDA_LIB_STAGING_MOUNTS_H_
#define GARUDA_LIB_STAGING_MOUNTS_H_

#include <string>

#include "absl/status/status.h"

namespace garuda {

// unshare(CLONE_NEWUSER | CLONE_NEWNS) for this (single-threaded) process,
// mapping its own uid and gid to themselves, with private propagation.
absl::Status EnterStagingNamespaces();

// Mounts overlayfs at `target`: `lower` (the project) read-only below,
// writes going to `upper`; `userxattr` (its attributes in user.overlay.*,
// as a user namespace needs) and `index=off`.
absl::Status MountOverlay(const std::string& lower, const std::string& upper,
                          const std::string& work, const std::string& target);

// Binds `path` over itself read-only, with every mount below it.
absl::Status BindReadOnlyOverItself(const std::string& path);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_MOUNTS_H_
