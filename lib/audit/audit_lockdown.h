// garuda-audit's lockdown: it only reads, so after this it can write no file
// (descriptors opened before, such as a witness store, stay usable), open no
// network socket and start no program.
#ifndef GARUDA_LIB_AUDIT_AUDIT_LOCKDOWN_H_
#define GARUDA_LIB_AUDIT_AUDIT_LOCKDOWN_H_

#include <string>

#include "absl/status/statusor.h"
#include "lib/lockdown/lockdown.h"

namespace garuda {

// Landlock with no writable path, the "auditor" seccomp role (no exec, the
// common denials), no network (AF_UNIX only), no_new_privs. A kernel without
// Landlock or seccomp is an error unless `accept_weaker_lockdown` gives a
// reason (reported in LockdownReport::weaker). Irreversible; needs one
// thread.
absl::StatusOr<LockdownReport> LockDownAudit(
    const std::string& accept_weaker_lockdown);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_AUDIT_LOCKDOWN_H_
