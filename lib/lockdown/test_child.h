// For tests: runs a function in a forked child, since a lockdown cannot be
// undone, and brings back the text it returns.
#ifndef GARUDA_LIB_LOCKDOWN_TEST_CHILD_H_
#define GARUDA_LIB_LOCKDOWN_TEST_CHILD_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"

namespace garuda {

// Forks; the child runs `body` and sends its result back through a pipe,
// then _exits. An error when the child dies another way (a signal, a seccomp
// kill).
absl::StatusOr<std::string> RunInChild(
    const std::function<std::string()>& body);

// A TCP listener on 127.0.0.1 at a free port, which it stores in `port`.
absl::StatusOr<UniqueFd> ListenOnLoopback(int* port);

// "0" when `result` is not negative, else the name of errno ("EPERM").
std::string ErrnoName(long result);

}  // namespace garuda

#endif  // GARUDA_LIB_LOCKDOWN_TEST_CHILD_H_
