#include "lib/apply/client.h"

#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/client.h"
#include "lib/ipc/sealed_memfd.h"

namespace garuda {
namespace {

class ApplierChannel : public ApplyService {
 public:
  explicit ApplierChannel(ipc::HelperProcess* process)
      : client_(process, "garuda-applier") {}

  absl::StatusOr<applier::ApplyOutcome> Apply(
      const ProposedChange& change) override {
    UniqueFd own;
    int fd = change.sealed_fd;
    if (fd < 0) {
      // An edit: the proposer's own list, sealed like the stager's, so that
      // the applier takes one kind of descriptor only.
      ASSIGN_OR_RETURN(own, ipc::SealedMemfd("garuda-edit", [&](int memfd) {
                         return WriteChangeSet(*change.change_set, memfd,
                                               "the edit's change list");
                       }));
      fd = own.get();
    }
    applier::ApplierRequest request;
    applier::ApplyChangeSet* apply = request.mutable_apply();
    apply->set_reason(change.reason);
    apply->set_session_id(change.session_id);
    apply->set_origin(change.origin == ProposedChange::Origin::kEdit
                          ? applier::ApplyChangeSet::EDIT
                          : applier::ApplyChangeSet::COMMAND);
    apply->set_tool(change.tool);
    if (change.relayed) *apply->mutable_relayed_answer() = *change.relayed;
    const int fds[] = {fd};
    ASSIGN_OR_RETURN(applier::ApplierReply reply,
                     client_.Call(request, nullptr, fds));
    if (!reply.has_applied()) {
      return absl::DataLossError("garuda-applier: no ApplyOutcome reply");
    }
    return reply.applied();
  }

  absl::StatusOr<applier::UndoOutcome> Undo(
      const std::string& undo_id, const std::string& session_id) override {
    applier::ApplierRequest request;
    request.mutable_undo()->set_undo_id(undo_id);
    request.mutable_undo()->set_session_id(session_id);
    ASSIGN_OR_RETURN(applier::ApplierReply reply, client_.Call(request));
    if (!reply.has_undone()) {
      return absl::DataLossError("garuda-applier: no UndoOutcome reply");
    }
    return reply.undone();
  }

 private:
  ipc::Client<applier::ApplierRequest, applier::ApplierReply> client_;
};

}  // namespace

std::unique_ptr<ApplyService> ApplierChannelClient(
    ipc::HelperProcess* applier) {
  return std::make_unique<ApplierChannel>(applier);
}

}  // namespace garuda
