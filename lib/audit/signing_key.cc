#include "lib/audit/signing_key.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"

namespace garuda {

absl::StatusOr<std::shared_ptr<const NoteSigner>> ReadSigningKey(
    const std::string& path) {
  RegularFileOptions options;
  options.follow_links = true;
  options.max_bytes = 4096;
  absl::StatusOr<std::string> text = ReadRegularFile(path, options);
  // Whatever the outcome, a group lent by a setgid bit goes now.
  const gid_t real = ::getgid();
  if (::getegid() != real && ::setresgid(real, real, real) != 0) {
    return LastErrnoStatus("setresgid (dropping the group that reads the key)");
  }
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat("the signing key (audit.signingKey): ",
                                     text.status().message()));
  }
  absl::StatusOr<NoteSigner> signer =
      ParseNoteSigner(absl::StripTrailingAsciiWhitespace(*text));
  std::fill(text->begin(), text->end(), '\0');
  if (!signer.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " (audit.signingKey): ", signer.status().message(),
                     "; make one with garuda-audit key generate"));
  }
  return std::make_shared<const NoteSigner>(std::move(signer).value());
}

absl::StatusOr<UniqueFd> CreateSigningKeyFile(const std::string& path) {
  absl::StatusOr<UniqueFd> fd = OpenFile(
      path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (absl::IsAlreadyExists(fd.status())) {
    return absl::AlreadyExistsError(
        absl::StrCat(path, " exists already; a key is never overwritten"));
  }
  return fd;
}

absl::StatusOr<std::string> WriteNewSigningKey(int fd, const std::string& name,
                                               const std::string& path) {
  absl::StatusOr<NoteSigner> signer = GenerateNoteSigner(name);
  if (!signer.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--name \"", name, "\": ", signer.status().message()));
  }
  std::string text = absl::StrCat(FormatNoteSigner(*signer), "\n");
  absl::Status written = WriteAll(fd, text);
  std::fill(text.begin(), text.end(), '\0');
  RETURN_IF_ERROR(written);
  if (::fsync(fd) != 0)
    return LastErrnoStatus(absl::StrCat("fsync(", path, ")"));
  return FormatNoteVerifier(VerifierOf(*signer, kNoteEd25519));
}

}  // namespace garuda
