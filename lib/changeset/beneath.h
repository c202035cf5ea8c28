// Paths of a change list resolved beneath a project root, never through a
// symbolic link and never out of the root: openat2(2) with RESOLVE_BENEATH
// and RESOLVE_NO_SYMLINKS, so the kernel, not string checks, holds the line.
#ifndef GARUDA_LIB_CHANGESET_BENEATH_H_
#define GARUDA_LIB_CHANGESET_BENEATH_H_

#include <sys/stat.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/unique_fd.h"
#include "proto/changeset.pb.h"

namespace garuda {

// A path a change list may name: relative, '/'-separated, no empty, "." or
// ".." component, no NUL byte. INVALID_ARGUMENT says which rule it broke.
absl::Status CheckRelativePath(absl::string_view path);

// openat2(root_fd, relative, flags | O_CLOEXEC) with RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS. A symlink anywhere on the way, the last component
// included, is FAILED_PRECONDITION ("reached through a symbolic link"); to
// look at a last component that may be a link, open its parent with
// OpenParentBeneath and use fstatat. A missing component, or one that is not
// a folder where a folder is needed, is NOT_FOUND.
absl::StatusOr<UniqueFd> OpenBeneath(int root_fd, absl::string_view relative,
                                     uint64_t flags, mode_t mode = 0);

// The folder that holds `relative` ("" is the root itself: a dup of it).
absl::StatusOr<UniqueFd> OpenParentBeneath(int root_fd,
                                           absl::string_view relative);

// Opens a folder as the root for the calls above.
absl::StatusOr<UniqueFd> OpenRoot(const std::string& path);

// The state of `name` in the folder `dir_fd`, not following a link there.
// ENOENT is FILE_TYPE_ABSENT. `what` names the path in errors. With
// `content`, a regular file's bytes are kept there (the ones hashed).
absl::StatusOr<Fingerprint> FingerprintAt(int dir_fd, const std::string& name,
                                          absl::string_view what,
                                          std::string* content = nullptr);

// The state of `relative` beneath the root. A missing parent folder, or a
// parent that is not a folder, means the path is absent. A symlinked parent
// is FAILED_PRECONDITION ("... is reached through a symbolic link").
absl::StatusOr<Fingerprint> FingerprintBeneath(int root_fd,
                                               absl::string_view relative);

// From an lstat result (and content hash for a regular file).
FileType FileTypeOfMode(mode_t mode);

bool SameFingerprint(const Fingerprint& a, const Fingerprint& b);
// "absent", "file 0644 sha256:1234abcd", "symlink", "folder 0755".
std::string DescribeFingerprint(const Fingerprint& fingerprint);

}  // namespace garuda

#endif  // GARUDA_LIB_CHANGESET_BENEATH_H_
