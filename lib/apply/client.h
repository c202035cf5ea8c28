// The client of the applier's session channel (proto/applier_service.proto),
// beside its server (service.h): what garuda-agent proposes to
// garuda-applier, and the interface tests may put their own behind.
#ifndef GARUDA_LIB_APPLY_CLIENT_H_
#define GARUDA_LIB_APPLY_CLIENT_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/changeset/changeset.h"
#include "lib/ipc/helper_process.h"
#include "proto/applier_service.pb.h"
#include "proto/common.pb.h"

namespace garuda {

// A change proposed to the applier, which decides itself (it asks the
// person, or re-checks the rules) before it writes anything.
struct ProposedChange {
  // kCommand: a staged command's changes (the T5 question); kEdit: an
  // edit_file or write_file call (the permission question).
  enum class Origin { kCommand, kEdit };
  Origin origin = Origin::kCommand;
  std::string tool;  // kEdit: "edit_file" or "write_file"
  std::string reason;
  std::string session_id;
  // The list (not owned), as the proposer read or made it.
  const ChangeSet* change_set = nullptr;
  // kCommand: the stager's sealed memfd (not owned), passed on unchanged;
  // -1 for an edit, whose list the client seals in a memfd of its own.
  int sealed_fd = -1;
  // An editor's answer relayed by the agent (only to an applier started
  // with --consent=relayed, which takes it marked as such).
  std::optional<RelayedAnswer> relayed;
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

// Over `garuda-applier serve`'s channel (`applier` not owned).
std::unique_ptr<ApplyService> ApplierChannelClient(ipc::HelperProcess* applier);

}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_CLIENT_H_
