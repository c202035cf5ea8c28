// errno to absl::Status, with the call and its argument in the message so a
// person can see what failed ("openat(/home/x/.garuda/audit): Permission
// denied").
#ifndef GARUDA_LIB_BASE_ERRNO_STATUS_H_
#define GARUDA_LIB_BASE_ERRNO_STATUS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace garuda {

// The status for `error_number`, its message "<what>: <strerror>".
absl::Status ErrnoStatus(int error_number, absl::string_view what);

// The status for the current errno.
absl::Status LastErrnoStatus(absl::string_view what);

}  // namespace garuda

#endif  // GARUDA_LIB_BASE_ERRNO_STATUS_H_
