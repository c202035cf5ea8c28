// The applier's lockdown, taken once everything it needs is open.
#ifndef GARUDA_LIB_APPLY_APPLIER_LOCKDOWN_H_
#define GARUDA_LIB_APPLY_APPLIER_LOCKDOWN_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace garuda {

struct ApplierLockdownOptions {
  // Non-empty: a kernel without Landlock or seccomp is accepted, for this
  // reason (--accept-weaker-lockdown WHY); what is missing is said on
  // stderr. Empty: such a kernel is an error.
  std::string accept_weaker_why;
};

// Role "applier": Landlock lets the process write only beneath `writable`
// (for an apply or an undo: the project and the undo store; for show,
// diff-dirs and undo --list: nothing), the applier's seccomp filter (no
// execve: it never starts a program), and no network (AF_UNIX sockets
// only). Irreversible for the process.
absl::Status LockDownApplier(const std::vector<std::string>& writable,
                             const ApplierLockdownOptions& options = {});

}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_APPLIER_LOCKDOWN_H_
