#include "lib/audit/paths.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/status_macros.h"

namespace garuda {

absl::StatusOr<std::string> AuditRoot() {
  ASSIGN_OR_RETURN(std::string home, HomeDirectory());
  return GarudaAuditRoot(home);
}

absl::StatusOr<std::string> ProjectAuditFolderName(const std::string& project) {
  if (project.empty()) {
    return absl::InvalidArgumentError("no project folder given (--project)");
  }
  ASSIGN_OR_RETURN(std::string real, RealProjectRoot(project));
  return ProjectKey(real);
}

absl::Status CheckLogName(absl::string_view name) {
  if (name.empty() || name.size() > 100 || name[0] == '.') {
    return absl::InvalidArgumentError(
        absl::StrCat("log name \"", name,
                     "\" must be 1 to 100 characters and not start with '.'"));
  }
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("log name \"", name,
                       "\" may hold only letters, digits, '.', '_' and '-'"));
    }
  }
  return absl::OkStatus();
}

std::string DefaultLogName(absl::Time start, pid_t pid) {
  absl::BitGen random;
  return absl::StrCat(
      absl::FormatTime("%Y%m%dT%H%M%SZ", start, absl::UTCTimeZone()), "-", pid,
      "-", absl::StrFormat("%08x", absl::Uniform<uint32_t>(random)));
}

// mkdir -p with 0700, then makes sure the folder itself is 0700 and ours: a
// folder someone else made, or one open to others, is refused or tightened.
absl::Status MakePrivateFolder(const std::string& path) {
  RETURN_IF_ERROR(MakeDirectories(path, 0700));
  ASSIGN_OR_RETURN(UniqueFd fd,
                   OpenFile(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return LastErrnoStatus(absl::StrCat("fstat(", path, ")"));
  }
  if (st.st_uid != ::geteuid()) {
    return absl::PermissionDeniedError(
        absl::StrCat(path, " belongs to another user (uid ", st.st_uid, ")"));
  }
  if ((st.st_mode & 07777) != 0700 && ::fchmod(fd.get(), 0700) != 0) {
    return LastErrnoStatus(absl::StrCat("fchmod(", path, ", 0700)"));
  }
  return absl::OkStatus();
}

}  // namespace garuda
