// The auditor's signing key (docs/audit.md, "Where to keep the signing
// key"): read once, before the lockdown, and held in memory only.
#ifndef GARUDA_LIB_AUDIT_SIGNING_KEY_H_
#define GARUDA_LIB_AUDIT_SIGNING_KEY_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"
#include "lib/crypto/note.h"

namespace garuda {

// Reads a PRIVATE+KEY+... file (a link is followed: the person names the
// path in a policy file; the target must be a regular file of at most 4
// KiB). When the program runs with a group it was given by its setgid bit
// (the way to keep the key from the person's other programs), that group
// is dropped for good right after the read, so nothing later in the
// process can read the key again.
absl::StatusOr<std::shared_ptr<const NoteSigner>> ReadSigningKey(
    const std::string& path);

// A new key file at `path`: created here (0600, O_EXCL: an existing file
// is never overwritten), written by WriteNewSigningKey, so that a program
// can lock itself down between the two.
absl::StatusOr<UniqueFd> CreateSigningKeyFile(const std::string& path);
// Generates a key named `name` into `fd` and returns its verifier key
// (<name>+<key id>+<base64>).
absl::StatusOr<std::string> WriteNewSigningKey(int fd, const std::string& name,
                                               const std::string& path);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_SIGNING_KEY_H_
