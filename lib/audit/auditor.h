// garuda-auditor: the only writer of ~/.garuda/audit. Opens what its role
// needs (the project's audit folder, a new log, the witness command), locks
// itself down as the "auditor" role, then appends events from standard
// input (append) or from its channel (serve).
#ifndef GARUDA_LIB_AUDIT_AUDITOR_H_
#define GARUDA_LIB_AUDIT_AUDITOR_H_

#include <string>

#include "lib/lockdown/roles.h"

namespace garuda {

struct AuditorOptions {
  std::string mode;     // "append" or "serve"
  std::string project;  // required
  std::string log;      // empty: a new unique name
  int channel_fd = -1;  // serve: the channel's descriptor
  // Step 2, once the log and the channel are open: main.cc's
  // LockDownAs(Role::kAuditor) with the person's --accept-weaker-lockdown;
  // empty: the auditor refuses to serve.
  LockDownCall lock_down;
};

// Returns the process exit status: 0 done, 1 an event refused or a failure,
// 2 a usage error, 130 append interrupted by SIGINT or SIGTERM (the log is
// closed all the same).
int RunAuditor(const AuditorOptions& options);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_AUDITOR_H_
