// What a session asks of its helper programs, as interfaces: the channel
// clients of helpers.h implement them over garuda-stager, garuda-applier and
// garuda-auditor; tests may put in their own.
#ifndef GARUDA_LIB_AGENT_SERVICES_H_
#define GARUDA_LIB_AGENT_SERVICES_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"
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
    // Staged mode, when the command changed something: the list as the
    // agent read it (to show it), and the stager's sealed memfd, which
    // goes on to the applier unchanged.
    std::optional<ChangeSet> change_set;
    UniqueFd sealed_change_set;
  };
  virtual absl::StatusOr<Ran> Run(const stager::RunCommand& command) = 0;
  virtual absl::Status End() = 0;
};

// A change the agent proposes to the applier, which decides itself (it
// asks the person, or re-checks the rules) before it writes anything.
struct ProposedChange {
  // kCommand: a staged command's changes (the T5 question); kEdit: an
  // edit_file or write_file call (the permission question).
  enum class Origin { kCommand, kEdit };
  Origin origin = Origin::kCommand;
  std::string tool;  // kEdit: "edit_file" or "write_file"
  std::string reason;
  std::string session_id;
  // The list (not owned), as the agent read or made it.
  const ChangeSet* change_set = nullptr;
  // kCommand: the stager's sealed memfd (not owned), passed on unchanged;
  // -1 for an edit, whose list the client seals in a memfd of its own.
  int sealed_fd = -1;
};

// garuda-applier: the only writer of the project.
class ApplyService {
 public:
  virtual ~ApplyService() = default;
  // DECLINED when the applier's own question or rules said no.
  virtual absl::StatusOr<applier::ApplyOutcome> Apply(
      const ProposedChange& change) = 0;
  // The session's last apply when `undo_id` is empty.
  virtual absl::StatusOr<applier::UndoOutcome> Undo(
      const std::string& undo_id, const std::string& session_id) = 0;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_SERVICES_H_
