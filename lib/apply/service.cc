#include "lib/apply/service.h"

#include <unistd.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/apply/apply.h"
#include "lib/apply/outcome.h"
#include "lib/apply/job_applier.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/beneath.h"
#include "lib/changeset/changeset.h"
#include "lib/consent/consent.h"
#include "lib/ipc/channel.h"
#include "lib/ipc/dispatcher.h"
#include "lib/ipc/helper_process.h"
#include "lib/ipc/sealed_memfd.h"
#include "lib/question/choice.h"
#include "lib/question/question.h"
#include "proto/applier_service.pb.h"

namespace garuda {
namespace {

// Nobody applied it: the flag did. The model must not believe a person saw
// the change.
constexpr char kAppliedByFlagLine[] =
    "The changes were applied with no question (garuda-agent -p "
    "--apply-staged), after the conflict check";

constexpr int kServing = 0;

// `session_id` goes into the undo record; empty: an apply of no session.
absl::Status CheckServedSessionId(const std::string& session_id) {
  if (session_id.empty()) return absl::OkStatus();
  return CheckSessionId(session_id);
}

applier::ApplyOutcome::Kind KindOf(ApplyOutcome outcome) {
  switch (outcome) {
    case ApplyOutcome::kApplied:
      return applier::ApplyOutcome::APPLIED;
    case ApplyOutcome::kConflict:
      return applier::ApplyOutcome::CONFLICT;
    case ApplyOutcome::kRefused:
      return applier::ApplyOutcome::REFUSED;
  }
  return applier::ApplyOutcome::KIND_UNSPECIFIED;
}

// `Reply` is applier::ApplyOutcome or applier::UndoOutcome (the same fields).
template <typename Reply>
void FillFromResult(const ApplyResult& result, bool undo, Reply* reply) {
  reply->set_kind(KindOf(result.outcome));
  if (result.outcome == ApplyOutcome::kApplied) {
    reply->set_files(result.paths);
    return;
  }
  reply->set_line(NotDoneLine(result, undo));
  for (const std::string& path : result.conflicts) reply->add_conflicts(path);
}

// Reads the whole list from `fd`, from offset 0: a sealed memfd
// (ipc::CheckSealed; anything else is refused, since a list that can still
// change after the question is not the list the person saw), checked
// against `project` (a real path). `name` starts errors.
absl::StatusOr<ChangeSet> ReadServedList(int fd, const std::string& name,
                                         const std::string& project) {
  // Sealed, so complete (a pipe whose writer never closes would hold the
  // applier forever) and unchangeable by the agent or anyone else who
  // holds it while the question shows it.
  RETURN_IF_ERROR(ipc::CheckSealed(fd, name));
  if (::lseek(fd, 0, SEEK_SET) != 0) {
    return LastErrnoStatus(absl::StrCat("lseek ", name));
  }
  return ReadChangeSetForProject(fd, name, project);
}

// Applies `change_set` (read by ReadServedList, and agreed to, or one that
// the apply refuses by itself) to `project`, recording its undo in
// `undo_root`, tagged with `session_id`. `reason` replaces the list's
// command in the record when not empty.
absl::Status ApplyServedList(ChangeSet change_set, const std::string& project,
                             const std::string& undo_root,
                             const std::string& reason,
                             const std::string& session_id,
                             applier::ApplyOutcome* reply,
                             const std::optional<std::vector<std::string>>&
                                 write_scope = std::nullopt) {
  if (change_set.NoChanges()) {
    reply->set_kind(applier::ApplyOutcome::NO_CHANGES);
    reply->set_line(kNoChangesLine);
    return absl::OkStatus();
  }
  if (!reason.empty()) change_set.header.set_command(reason);
  ApplyOptions options;
  options.project = project;
  options.undo_root = undo_root;
  options.session_id = session_id;
  options.write_scope = write_scope;
  ASSIGN_OR_RETURN(ApplyResult result, ApplyChangeSet(change_set, options));
  FillFromResult(result, /*undo=*/false, reply);
  if (result.outcome == ApplyOutcome::kApplied) {
    reply->set_line(kAppliedLine);
    reply->set_undo_id(result.undo_id);
  }
  return absl::OkStatus();
}

// The relayed answer of `apply`, taken only where the applier was started
// to take one; anywhere else it is refused, so that it can never stand in
// for a question the applier can ask itself.
absl::StatusOr<std::optional<RelayedConsent>> RelayedAnswerOf(
    const applier::ApplyChangeSet& apply, ConsentMode mode) {
  if (!apply.has_relayed_answer()) return std::optional<RelayedConsent>();
  if (mode != ConsentMode::kRelayed) {
    return absl::PermissionDeniedError(absl::StrCat(
        "ApplyChangeSet carries a relayed answer, but this applier decides "
        "itself (--consent=",
        ConsentModeName(mode), "); nothing was written"));
  }
  return std::optional<RelayedConsent>(RelayedConsent{
      apply.relayed_answer().from(), apply.relayed_answer().yes()});
}

absl::StatusOr<ConsentDecision> Decide(
    Consent& consent, const applier::ApplyChangeSet& apply,
    const ChangeSet& change_set, int project_fd,
    const std::optional<RelayedConsent>& relayed) {
  switch (apply.origin()) {
    case applier::ApplyChangeSet::COMMAND:
      return consent.ForCommandChanges(change_set, project_fd, relayed);
    case applier::ApplyChangeSet::EDIT:
      return consent.ForEdit(change_set, apply.tool(), project_fd, relayed);
    default:
      return absl::InvalidArgumentError(
          "ApplyChangeSet needs its origin (COMMAND or EDIT): it decides "
          "which question the applier asks");
  }
}

std::string DeclinedLine(const applier::ApplyChangeSet& apply,
                         const ConsentDecision& decision) {
  if (apply.origin() == applier::ApplyChangeSet::COMMAND) {
    if (decision.how == "asked: discard") return kDiscardedLine;
    return absl::StrCat(kDiscardedLine, " (", decision.how, ")");
  }
  if (decision.how == "asked: no") return "The user said no to this edit.";
  return absl::StrCat("Not applied: ", decision.how,
                      ". An allow rule in the settings (permissions.allow) "
                      "can permit such calls.");
}

void AddPaths(const std::vector<std::string>& paths,
              google::protobuf::RepeatedPtrField<std::string>* out) {
  for (const std::string& path : paths) *out->Add() = path;
}

std::vector<std::string> PathsOf(const ChangeSet& change_set) {
  std::vector<std::string> paths;
  for (const Change& change : change_set.changes) {
    paths.push_back(change.entry.path());
  }
  return paths;
}

// One ApplyChangeSet: read the sealed list, decide (lib/consent), then
// apply: all of it, or the files the person chose (made whole,
// lib/question/choice.h) with the rest discarded. A list the apply must
// refuse (incomplete, refused entries) is still shown to a person at the
// terminal, and then refused.
absl::Status ServeApply(const applier::ApplyChangeSet& apply, int fd,
                        const std::string& name, const ApplierPlaces& places,
                        int project_fd, Consent& consent,
                        applier::ApplyOutcome* reply) {
  RETURN_IF_ERROR(CheckServedSessionId(apply.session_id()));
  ASSIGN_OR_RETURN(std::optional<RelayedConsent> relayed,
                   RelayedAnswerOf(apply, consent.mode()));
  ASSIGN_OR_RETURN(ChangeSet change_set,
                   ReadServedList(fd, name, places.project));
  const bool complete =
      !change_set.summary.incomplete() && change_set.summary.refused().empty();
  std::optional<Choice> choice;
  bool by_flag = false;
  if (!change_set.NoChanges() && complete) {
    ASSIGN_OR_RETURN(ConsentDecision decision,
                     Decide(consent, apply, change_set, project_fd, relayed));
    reply->set_decision(decision.how);
    if (!decision.yes) {
      reply->set_kind(applier::ApplyOutcome::DECLINED);
      reply->set_line(DeclinedLine(apply, decision));
      reply->set_no_person(decision.no_person);
      AddPaths(PathsOf(change_set), reply->mutable_discarded_paths());
      return absl::OkStatus();
    }
    by_flag = decision.by_apply_staged;
    if (decision.some && apply.origin() == applier::ApplyChangeSet::COMMAND) {
      // The subset is this process's own: the person chose it at this
      // applier's question; the agent never names files.
      choice = ChooseChanges(change_set, decision.chosen);
      if (choice->applied.empty()) {
        reply->set_kind(applier::ApplyOutcome::DECLINED);
        reply->set_line(absl::StrCat(
            kDiscardedLine, " (", absl::StrJoin(choice->left_out, "; "), ")"));
        AddPaths(choice->discarded, reply->mutable_discarded_paths());
        return absl::OkStatus();
      }
      change_set = choice->chosen;
    }
  } else if (!complete && apply.origin() == applier::ApplyChangeSet::COMMAND) {
    // Never applied, whatever the answer; the person still sees the
    // question (Discard only) and why.
    reply->set_decision(
        consent.ForCommandChanges(change_set, project_fd, relayed).how);
  }
  std::vector<std::string> paths = PathsOf(change_set);
  RETURN_IF_ERROR(ApplyServedList(std::move(change_set), places.project,
                                  places.undo_root, apply.reason(),
                                  apply.session_id(), reply,
                                  places.write_scope));
  if (reply->kind() == applier::ApplyOutcome::APPLIED) {
    AddPaths(paths, reply->mutable_applied_paths());
    if (choice) {
      AddPaths(choice->discarded, reply->mutable_discarded_paths());
      reply->set_line(AppliedSomeLine(*choice));
    } else if (by_flag) {
      reply->set_by_apply_staged(true);
      reply->set_line(kAppliedByFlagLine);
    }
  } else if (reply->kind() != applier::ApplyOutcome::NO_CHANGES) {
    // Nothing was written.
    AddPaths(paths, reply->mutable_discarded_paths());
    if (choice) AddPaths(choice->discarded, reply->mutable_discarded_paths());
  }
  return absl::OkStatus();
}

// Undoes apply `undo_id`, or when it is empty the newest apply of
// `session_id` that is not undone yet. The undo's own record has no
// session, so a second call goes one apply further back.
absl::Status UndoServedApply(const std::string& project,
                             const std::string& undo_root,
                             const std::string& undo_id,
                             const std::string& session_id,
                             applier::UndoOutcome* reply) {
  std::string id = undo_id;
  std::vector<std::string> paths;  // for the person: what is restored
  if (id.empty()) {
    if (session_id.empty()) {
      return absl::InvalidArgumentError(
          "UndoApply needs an undo_id or a session_id");
    }
    RETURN_IF_ERROR(CheckServedSessionId(session_id));
    ASSIGN_OR_RETURN(std::vector<UndoRecordInfo> records,
                     ListUndoRecords(undo_root, project));
    for (const UndoRecordInfo& record : records) {  // newest first
      if (record.session_id == session_id && record.undone_by.empty()) {
        id = record.id;
        paths = record.paths;
        break;
      }
    }
    if (id.empty()) {
      return absl::NotFoundError(absl::StrCat(
          "session ", session_id, " has no apply left to undo in ", project));
    }
  }
  ApplyOptions options;
  options.project = project;
  options.undo_root = undo_root;
  ASSIGN_OR_RETURN(ApplyResult result, UndoApply(id, options));
  FillFromResult(result, /*undo=*/true, reply);
  reply->set_undo_id(id);
  if (result.outcome == ApplyOutcome::kApplied) {
    reply->set_line(UndoneLine(id));
    for (const std::string& path : paths) reply->add_paths(path);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<OpenedApplier> OpenApplierServe(
    const ApplierServeOptions& options) {
  ASSIGN_OR_RETURN(
      ipc::Channel channel,
      ipc::ChannelFromFd(options.channel_fd,
                         ipc::ChannelOptions{"garuda-agent", 1 << 20, 1}));
  ASSIGN_OR_RETURN(ApplierPlaces places,
                   LocateApplierPlaces(options.project, options.undo_root));
  ASSIGN_OR_RETURN(UniqueFd project_fd, OpenRoot(places.project));
  RETURN_IF_ERROR(MakeDirectories(places.undo_root, 0700));
  ConsentOptions consent_options = options.consent;
  if (!options.job_file.empty()) {
    RETURN_IF_ERROR(OpenApplierJob(options.job_file, &places, &consent_options));
  }
  // The rules are read and the terminal opened now, before the lockdown:
  // what decides is this process's own view, not the agent's.
  ASSIGN_OR_RETURN(std::unique_ptr<Consent> consent,
                   Consent::Open(consent_options, places.project));
  if (consent_options.apply_staged && options.log) {
    options.log(
        "--apply-staged: a command's changes are applied without a question "
        "unless a rule denies or asks about one of its paths");
  }
  return OpenedApplier{std::move(channel), std::move(places),
                       std::move(project_fd), std::move(consent)};
}

std::vector<std::string> OpenedApplier::writable_paths() const {
  return {places.project, places.undo_root};
}

absl::Status ServeApplier(OpenedApplier& opened,
                          const ApplierServeOptions& options) {
  const ApplierPlaces& places = opened.places;
  const UniqueFd& project_fd = opened.project_fd;
  Consent* consent = opened.consent.get();
  if (options.log) {
    options.log(absl::StrCat("serving ", places.project, " (undo records in ",
                             places.undo_root, ")"));
  }
  using Dispatcher =
      ipc::Dispatcher<applier::ApplierRequest, applier::ApplierReply>;
  Dispatcher dispatcher(kServing);
  dispatcher.NameState(kServing, "serving");
  dispatcher.On(
      applier::ApplierRequest::kApply, {kServing},
      [&](const applier::ApplierRequest& request, std::vector<UniqueFd>& fds,
          applier::ApplierReply* reply) -> absl::Status {
        if (fds.size() != 1) {
          return absl::InvalidArgumentError(
              absl::StrCat("ApplyChangeSet needs the change list's "
                           "descriptor with the request (SCM_RIGHTS); ",
                           fds.size(), " came"));
        }
        UniqueFd fd = std::move(fds[0]);
        return ServeApply(request.apply(), fd.get(),
                          absl::StrCat("the change list of ApplyChangeSet seq ",
                                       request.seq()),
                          places, project_fd.get(), *consent,
                          reply->mutable_applied());
      });
  dispatcher.On(
      applier::ApplierRequest::kUndo, {kServing},
      [&](const applier::ApplierRequest& request, std::vector<UniqueFd>&,
          applier::ApplierReply* reply) -> absl::Status {
        return UndoServedApply(
            places.project, places.undo_root, request.undo().undo_id(),
            request.undo().session_id(), reply->mutable_undone());
      });
  return dispatcher.Serve(opened.channel);
}

}  // namespace garuda
