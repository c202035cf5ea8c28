// What a session asks of its helper programs, as interfaces: the channel
// clients of helpers.h implement them over garuda-stager, garuda-applier and
// garuda-auditor; tests may put in their own.
#ifndef GARUDA_LIB_AGENT_SERVICES_H_
#define GARUDA_LIB_AGENT_SERVICES_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/changeset/changeset.h"
#include "proto/applier_service.pb.h"
#include "proto/audit_log.pb.h"
#include "proto/stager_service.pb.h"

namespace garuda {
namespace agent {

// garuda-auditor: every event of the session, in order. An error means the
// auditor is gone, and the session stops.
class AuditSink {
 public:
  virtual ~AuditSink() = default;
  virtual absl::Status Record(const audit::AuditEvent& event) = 0;
  // fsync and the last head (at the end of a session).
  virtual absl::Status Close() = 0;
};

// garuda-stager: runs commands in the session's mode.
class CommandService {
 public:
  virtual ~CommandService() = default;
  virtual absl::StatusOr<stager::SessionDescription> Describe() = 0;
  struct Ran {
    stager::CommandResult result;
    // Staged mode, when the command changed something.
    std::optional<ChangeSet> change_set;
  };
  virtual absl::StatusOr<Ran> Run(const stager::RunCommand& command) = 0;
  virtual absl::Status End() = 0;
};

// garuda-applier: the only writer of the project.
class ApplyService {
 public:
  virtual ~ApplyService() = default;
  virtual absl::StatusOr<applier::ApplyOutcome> Apply(
      const ChangeSet& change_set, const std::string& reason,
      const std::string& session_id) = 0;
  // The session's last apply when `undo_id` is empty.
  virtual absl::StatusOr<applier::UndoOutcome> Undo(
      const std::string& undo_id, const std::string& session_id) = 0;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_SERVICES_H_
