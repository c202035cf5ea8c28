#include "lib/changeset/beneath.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"

namespace garuda {

absl::Status CheckRelativePath(absl::string_view path) {
  if (path.empty()) return absl::InvalidArgumentError("an empty path");
  if (path.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(VisiblePath(path), ": a NUL byte in the path"));
  }
  if (path.front() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat(VisiblePath(path), ": an absolute path"));
  }
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part.empty() || part == ".") {
      return absl::InvalidArgumentError(absl::StrCat(
          VisiblePath(path), ": an empty or \".\" component in the path"));
    }
    if (part == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat(VisiblePath(path), ": \"..\" in the path"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<UniqueFd> OpenBeneath(int root_fd, absl::string_view relative,
                                     uint64_t flags, mode_t mode) {
  struct open_how how = {};
  how.flags = flags | O_CLOEXEC;
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  std::string path = relative.empty() ? "." : std::string(relative);
  long fd;
  do {
    fd = ::syscall(SYS_openat2, root_fd, path.c_str(), &how, sizeof(how));
  } while (fd < 0 && (errno == EINTR || errno == EAGAIN));
  if (fd < 0) {
    int error = errno;
    if (error == ELOOP) {
      return absl::FailedPreconditionError(absl::StrCat(
          VisiblePath(relative), " is reached through a symbolic link"));
    }
    if (error == ENOTDIR) {
      return absl::NotFoundError(
          absl::StrCat(VisiblePath(relative), ": a component is not a folder"));
    }
    if (error == EXDEV) {
      return absl::FailedPreconditionError(
          absl::StrCat(VisiblePath(relative), " leads out of the project"));
    }
    return ErrnoStatus(error,
                       absl::StrCat("openat2(", VisiblePath(relative), ")"));
  }
  return UniqueFd(static_cast<int>(fd));
}

absl::StatusOr<UniqueFd> OpenParentBeneath(int root_fd,
                                           absl::string_view relative) {
  size_t slash = relative.rfind('/');
  absl::string_view parent =
      slash == absl::string_view::npos ? "" : relative.substr(0, slash);
  return OpenBeneath(root_fd, parent, O_RDONLY | O_DIRECTORY);
}

absl::StatusOr<UniqueFd> OpenRoot(const std::string& path) {
  return OpenFile(path, O_RDONLY | O_DIRECTORY);
}

FileType FileTypeOfMode(mode_t mode) {
  if (S_ISREG(mode)) return FILE_TYPE_REGULAR;
  if (S_ISLNK(mode)) return FILE_TYPE_SYMLINK;
  if (S_ISDIR(mode)) return FILE_TYPE_DIRECTORY;
  return FILE_TYPE_SPECIAL;
}

absl::StatusOr<Fingerprint> FingerprintAt(int dir_fd, const std::string& name,
                                          absl::string_view what,
                                          std::string* content) {
  Fingerprint fingerprint;
  struct stat st;
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) {
      fingerprint.set_type(FILE_TYPE_ABSENT);
      return fingerprint;
    }
    return LastErrnoStatus(absl::StrCat("stat(", VisiblePath(what), ")"));
  }
  fingerprint.set_type(FileTypeOfMode(st.st_mode));
  switch (fingerprint.type()) {
    case FILE_TYPE_REGULAR: {
      fingerprint.set_mode(st.st_mode & 07777);
      int fd = ::openat(dir_fd, name.c_str(),
                        O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0) {
        return LastErrnoStatus(absl::StrCat("open(", VisiblePath(what), ")"));
      }
      UniqueFd file(fd);
      struct stat opened;
      if (::fstat(file.get(), &opened) != 0 || !S_ISREG(opened.st_mode) ||
          opened.st_ino != st.st_ino) {
        return absl::AbortedError(absl::StrCat(
            VisiblePath(what), " changed while it was being read"));
      }
      absl::StatusOr<std::string> digest;
      if (content != nullptr) {
        absl::StatusOr<std::string> bytes = ReadAll(file.get());
        if (bytes.ok()) {
          *content = *std::move(bytes);
          digest = Sha256Bytes(*content);
        } else {
          digest = bytes.status();
        }
      } else {
        digest = Sha256OfFd(file.get());
      }
      if (!digest.ok()) {
        return absl::Status(
            digest.status().code(),
            absl::StrCat(VisiblePath(what), ": ", digest.status().message()));
      }
      fingerprint.set_sha256(*digest);
      break;
    }
    case FILE_TYPE_SYMLINK: {
      std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
      ssize_t n =
          ::readlinkat(dir_fd, name.c_str(), target.data(), target.size());
      if (n < 0) {
        return LastErrnoStatus(
            absl::StrCat("readlink(", VisiblePath(what), ")"));
      }
      target.resize(static_cast<size_t>(n));
      fingerprint.set_sha256(Sha256Bytes(target));
      break;
    }
    case FILE_TYPE_DIRECTORY:
      fingerprint.set_mode(st.st_mode & 07777);
      break;
    default:
      fingerprint.set_mode(st.st_mode & 07777);
      break;
  }
  return fingerprint;
}

absl::StatusOr<Fingerprint> FingerprintBeneath(int root_fd,
                                               absl::string_view relative) {
  absl::StatusOr<UniqueFd> parent = OpenParentBeneath(root_fd, relative);
  if (!parent.ok()) {
    if (absl::IsNotFound(parent.status())) {
      Fingerprint absent;
      absent.set_type(FILE_TYPE_ABSENT);
      return absent;
    }
    return parent.status();
  }
  return FingerprintAt(parent->get(), Basename(relative), relative);
}

bool SameFingerprint(const Fingerprint& a, const Fingerprint& b) {
  return a.type() == b.type() && a.mode() == b.mode() &&
         a.sha256() == b.sha256();
}

std::string DescribeFingerprint(const Fingerprint& fingerprint) {
  switch (fingerprint.type()) {
    case FILE_TYPE_ABSENT:
      return "absent";
    case FILE_TYPE_REGULAR:
      return absl::StrFormat(
          "file %04o sha256:%s", fingerprint.mode(),
          absl::BytesToHexString(fingerprint.sha256().substr(0, 6)));
    case FILE_TYPE_SYMLINK:
      return "symlink";
    case FILE_TYPE_DIRECTORY:
      return absl::StrFormat("folder %04o", fingerprint.mode());
    case FILE_TYPE_SPECIAL:
      return "special file";
    default:
      return "unknown";
  }
}

}  // namespace garuda
