// The client of the auditor's channel (proto/auditor_service.proto), beside
// its server (server.h): what garuda-agent records, and the interface tests
// may put their own behind.
#ifndef GARUDA_LIB_AUDIT_CLIENT_H_
#define GARUDA_LIB_AUDIT_CLIENT_H_

#include <memory>

#include "absl/status/status.h"
#include "lib/ipc/helper_process.h"
#include "proto/audit_log.pb.h"

namespace garuda {

// garuda-auditor: every event of the session, in order. An error means the
// auditor is gone, and the session stops.
class AuditSink {
 public:
  virtual ~AuditSink() = default;
  virtual absl::Status Record(const audit::AuditEvent& event) = 0;
  // fsync and the last head (at the end of a session).
  virtual absl::Status Close() = 0;
};

// Over `garuda-auditor serve`'s channel (`auditor` not owned).
std::unique_ptr<AuditSink> AuditChannelClient(ipc::HelperProcess* auditor);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_CLIENT_H_
