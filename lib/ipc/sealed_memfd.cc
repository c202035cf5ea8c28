#include "lib/ipc/sealed_memfd.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/errno_status.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace ipc {

int SealsOfASealedMemfd() {
  return F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;
}

absl::StatusOr<UniqueFd> SealedMemfd(
    const char* name, const std::function<absl::Status(int fd)>& fill) {
  UniqueFd fd(::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd) return LastErrnoStatus(absl::StrCat("memfd_create(", name, ")"));
  RETURN_IF_ERROR(fill(fd.get()));
  if (::fcntl(fd.get(), F_ADD_SEALS, SealsOfASealedMemfd()) != 0) {
    return LastErrnoStatus(absl::StrCat("seal the memfd ", name));
  }
  if (::lseek(fd.get(), 0, SEEK_SET) != 0) {
    return LastErrnoStatus(absl::StrCat("lseek the memfd ", name));
  }
  return fd;
}

absl::Status CheckSealed(int fd, absl::string_view what) {
  int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is not a sealed memfd (F_GET_SEALS: ", ::strerror(errno),
        "); only a sealed list is applied"));
  }
  std::vector<std::string> missing;
  if (!(seals & F_SEAL_WRITE)) missing.push_back("F_SEAL_WRITE");
  if (!(seals & F_SEAL_GROW)) missing.push_back("F_SEAL_GROW");
  if (!(seals & F_SEAL_SHRINK)) missing.push_back("F_SEAL_SHRINK");
  if (!(seals & F_SEAL_SEAL)) missing.push_back("F_SEAL_SEAL");
  if (!missing.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is a memfd without ", absl::StrJoin(missing, ", "),
                     ": it could still change, so it is refused"));
  }
  return absl::OkStatus();
}

}  // namespace ipc
}  // namespace garuda
