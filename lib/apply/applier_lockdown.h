// The applier's lockdown, taken once everything it needs is open.
#ifndef GARUDA_LIB_APPLY_APPLIER_LOCKDOWN_H_
#define GARUDA_LIB_APPLY_APPLIER_LOCKDOWN_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace garuda {

// Role "applier": Landlock lets the process write only beneath `writable`
// (for an apply or an undo: the project and the undo store; for show,
// diff-dirs and undo --list: nothing), the applier's seccomp filter, and no
// network (AF_UNIX sockets only). Irreversible for the process.
absl::Status LockDownApplier(const std::vector<std::string>& writable);

}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_APPLIER_LOCKDOWN_H_
