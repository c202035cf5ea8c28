#include "lib/apply/service.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/apply/outcome.h"
#include "lib/apply/service_actions.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/beneath.h"
#include "lib/ipc/channel.h"
#include "lib/ipc/dispatcher.h"
#include "lib/ipc/helper_process.h"
#include "proto/applier_service.pb.h"

namespace garuda {
namespace {

constexpr int kServing = 0;

// ServedOutcome::Kind has the proto's numbers.
ApplyOutcome::Kind KindOf(ServedOutcome::Kind kind) {
  return static_cast<ApplyOutcome::Kind>(kind);
}
static_assert(static_cast<int>(ServedOutcome::Kind::kApplied) ==
                  ApplyOutcome::APPLIED &&
              static_cast<int>(ServedOutcome::Kind::kNoChanges) ==
                  ApplyOutcome::NO_CHANGES &&
              static_cast<int>(ServedOutcome::Kind::kConflict) ==
                  ApplyOutcome::CONFLICT &&
              static_cast<int>(ServedOutcome::Kind::kRefused) ==
                  ApplyOutcome::REFUSED);

}  // namespace

absl::Status RunApplierServe(const ApplierServeOptions& options) {
  ASSIGN_OR_RETURN(
      ipc::Channel channel,
      ipc::ChannelFromFd(options.channel_fd,
                         ipc::ChannelOptions{"garuda-agent", 1 << 20, 1}));
  ASSIGN_OR_RETURN(ApplierPlaces places,
                   LocateApplierPlaces(options.project, options.undo_root));
  RETURN_IF_ERROR(OpenRoot(places.project).status());
  RETURN_IF_ERROR(MakeDirectories(places.undo_root, 0700));
  // Everything is open: from here on the process writes only the project
  // and the undo store, and reaches no network.
  if (options.lock_down) {
    RETURN_IF_ERROR(options.lock_down({places.project, places.undo_root}));
  }
  if (options.log) {
    options.log(absl::StrCat("serving ", places.project, " (undo records in ",
                             places.undo_root, ")"));
  }
  using Dispatcher = ipc::Dispatcher<ApplierRequest, ApplierReply>;
  Dispatcher dispatcher(kServing);
  dispatcher.NameState(kServing, "serving");
  dispatcher.On(
      ApplierRequest::kApply, {kServing},
      [&](const ApplierRequest& request, std::vector<UniqueFd>& fds,
          ApplierReply* reply) -> absl::Status {
        if (fds.size() != 1) {
          return absl::InvalidArgumentError(
              absl::StrCat("ApplyChangeSet needs the change list's "
                           "descriptor with the request (SCM_RIGHTS); ",
                           fds.size(), " came"));
        }
        UniqueFd fd = std::move(fds[0]);
        ASSIGN_OR_RETURN(
            ServedOutcome served,
            ApplyServedList(
                fd.get(),
                absl::StrCat("the change list of ApplyChangeSet seq ",
                             request.seq()),
                places.project, places.undo_root, request.apply().reason(),
                request.apply().session_id()));
        ApplyOutcome* outcome = reply->mutable_applied();
        outcome->set_kind(KindOf(served.kind));
        outcome->set_line(served.line);
        for (const std::string& path : served.conflicts) {
          outcome->add_conflicts(path);
        }
        outcome->set_undo_id(served.undo_id);
        outcome->set_files(served.files);
        return absl::OkStatus();
      });
  dispatcher.On(ApplierRequest::kUndo, {kServing},
                [&](const ApplierRequest& request, std::vector<UniqueFd>&,
                    ApplierReply* reply) -> absl::Status {
                  ASSIGN_OR_RETURN(
                      ServedOutcome served,
                      UndoServedApply(places.project, places.undo_root,
                                      request.undo().undo_id(),
                                      request.undo().session_id()));
                  UndoOutcome* outcome = reply->mutable_undone();
                  outcome->set_kind(KindOf(served.kind));
                  outcome->set_undo_id(served.undo_id);
                  outcome->set_line(served.line);
                  outcome->set_files(served.files);
                  for (const std::string& path : served.conflicts) {
                    outcome->add_conflicts(path);
                  }
                  return absl::OkStatus();
                });
  return dispatcher.Serve(channel);
}

}  // namespace garuda
