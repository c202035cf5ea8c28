#include "lib/apply/service.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/apply/outcome.h"
#include "lib/apply/service_actions.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/beneath.h"
#include "lib/changeset/changeset.h"
#include "lib/consent/consent.h"
#include "lib/question/question.h"
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

// The relayed answer of `apply`, taken only where the applier was started
// to take one; anywhere else it is refused, so that it can never stand in
// for a question the applier can ask itself.
absl::StatusOr<std::optional<RelayedConsent>> RelayedAnswerOf(
    const ApplyChangeSet& apply, ConsentMode mode) {
  if (!apply.has_relayed_answer()) return std::optional<RelayedConsent>();
  if (mode != ConsentMode::kRelayed) {
    return absl::PermissionDeniedError(absl::StrCat(
        "ApplyChangeSet carries a relayed answer, but this applier decides "
        "itself (--consent=",
        ConsentModeName(mode), "); nothing was written"));
  }
  return std::optional<RelayedConsent>(
      RelayedConsent{apply.relayed_answer().from(), apply.relayed_answer().yes()});
}

absl::StatusOr<ConsentDecision> Decide(
    Consent& consent, const ApplyChangeSet& apply, const ChangeSet& change_set,
    int project_fd, const std::optional<RelayedConsent>& relayed) {
  switch (apply.origin()) {
    case ApplyChangeSet::COMMAND:
      return consent.ForCommandChanges(change_set, project_fd, relayed);
    case ApplyChangeSet::EDIT:
      return consent.ForEdit(change_set, apply.tool(), project_fd, relayed);
    default:
      return absl::InvalidArgumentError(
          "ApplyChangeSet needs its origin (COMMAND or EDIT): it decides "
          "which question the applier asks");
  }
}

std::string DeclinedLine(const ApplyChangeSet& apply,
                         const ConsentDecision& decision) {
  if (apply.origin() == ApplyChangeSet::COMMAND) {
    if (decision.how == "asked: discard") return kDiscardedLine;
    return absl::StrCat(kDiscardedLine, " (", decision.how, ")");
  }
  if (decision.how == "asked: no") return "The user said no to this edit.";
  return absl::StrCat("Not applied: ", decision.how,
                      ". An allow rule in the settings (permissions.allow) "
                      "can permit such calls.");
}

}  // namespace

absl::Status RunApplierServe(const ApplierServeOptions& options) {
  ASSIGN_OR_RETURN(
      ipc::Channel channel,
      ipc::ChannelFromFd(options.channel_fd,
                         ipc::ChannelOptions{"garuda-agent", 1 << 20, 1}));
  ASSIGN_OR_RETURN(ApplierPlaces places,
                   LocateApplierPlaces(options.project, options.undo_root));
  ASSIGN_OR_RETURN(UniqueFd project_fd, OpenRoot(places.project));
  RETURN_IF_ERROR(MakeDirectories(places.undo_root, 0700));
  // The rules are read and the terminal opened now, before the lockdown:
  // what decides is this process's own view, not the agent's.
  ASSIGN_OR_RETURN(std::unique_ptr<Consent> consent,
                   Consent::Open(options.consent, places.project));
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
        const ApplyChangeSet& apply = request.apply();
        const std::string name = absl::StrCat(
            "the change list of ApplyChangeSet seq ", request.seq());
        RETURN_IF_ERROR(CheckServedSessionId(apply.session_id()));
        ASSIGN_OR_RETURN(std::optional<RelayedConsent> relayed,
                         RelayedAnswerOf(apply, consent->mode()));
        ASSIGN_OR_RETURN(ChangeSet change_set,
                         ReadServedList(fd.get(), name, places.project));
        ServedOutcome served;
        const bool complete = !change_set.summary.incomplete() &&
                              change_set.summary.refused().empty();
        if (!complete && apply.origin() == ApplyChangeSet::COMMAND) {
          // Never applied, whatever the answer; the person still sees the
          // question (Discard only) and why.
          reply->mutable_applied()->set_decision(
              consent
                  ->ForCommandChanges(change_set, project_fd.get(), relayed)
                  .how);
        }
        if (change_set.NoChanges() || !complete) {
          // Refused by the apply itself (incomplete, refused entries)
          // before it writes anything.
          ASSIGN_OR_RETURN(served,
                           ApplyServedList(std::move(change_set),
                                           places.project, places.undo_root,
                                           apply.reason(), apply.session_id()));
        } else {
          ASSIGN_OR_RETURN(ConsentDecision decision,
                           Decide(*consent, apply, change_set, project_fd.get(),
                                  relayed));
          reply->mutable_applied()->set_decision(decision.how);
          if (!decision.yes) {
            ApplyOutcome* declined = reply->mutable_applied();
            declined->set_kind(ApplyOutcome::DECLINED);
            declined->set_line(DeclinedLine(apply, decision));
            return absl::OkStatus();
          }
          ASSIGN_OR_RETURN(served,
                           ApplyServedList(std::move(change_set),
                                           places.project, places.undo_root,
                                           apply.reason(), apply.session_id()));
        }
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
