#include "lib/base/errno_status.h"

#include <cerrno>

namespace garuda {

absl::Status ErrnoStatus(int error_number, absl::string_view what) {
  return absl::ErrnoToStatus(error_number, what);
}

absl::Status LastErrnoStatus(absl::string_view what) {
  return ErrnoStatus(errno, what);
}

}  // namespace garuda
