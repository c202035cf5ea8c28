// garuda-auditor: the only writer of ~/.garuda/audit. Opens what its role
// needs (the project's audit folder, a new log, the witness command), locks
// itself down as the "auditor" role, then appends events from standard
// input (append) or from its channel (serve).
#ifndef GARUDA_LIB_AUDIT_AUDITOR_H_
#define GARUDA_LIB_AUDIT_AUDITOR_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "lib/audit/writer.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/channel.h"

#include "lib/lockdown/roles.h"

namespace garuda {

struct AuditorOptions {
  std::string mode;     // "append" or "serve"
  std::string project;  // required
  std::string log;      // empty: a new unique name
  int channel_fd = -1;  // serve: the channel's descriptor
};

// What the auditor opened before its lockdown.
struct OpenedAuditor {
  bool append = false;
  std::unique_ptr<AuditWriter> writer;
  UniqueFd interrupts;                     // append: SIGINT, SIGTERM
  std::unique_ptr<ipc::Channel> channel;  // serve
};

// Step 1: settings, the project's audit folder, a new log, the signing key
// and the channel, while the process may still open them. An error names
// what is wrong (a usage error is InvalidArgument).
absl::StatusOr<OpenedAuditor> OpenAuditor(const AuditorOptions& options);

// Step 2's needs: main.cc calls LockDownAs(Role::kAuditor, these).
RoleNeeds AuditorNeeds(const OpenedAuditor& opened);

// Step 3: appends the events of standard input (append) or of the channel
// (serve). Returns the process exit status: 0 done, 1 an event refused or a
// failure, 130 append interrupted by SIGINT or SIGTERM (the log is closed
// all the same).
int ServeAuditor(OpenedAuditor& opened);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_AUDITOR_H_
