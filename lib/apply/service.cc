#include "lib/apply/service.h"

#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/apply/apply.h"
#include "lib/apply/outcome.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/beneath.h"
#include "lib/ipc/channel.h"
#include "lib/ipc/dispatcher.h"
#include "lib/ipc/helper_process.h"
#include "lib/question/question.h"
#include "proto/applier_service.pb.h"

namespace garuda {
namespace {

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

// Reads the whole list from `fd` (a memfd or a file, from its offset; a
// pipe or a socket is refused) and applies it to `project` (a real path),
// recording its undo in `undo_root`, tagged with `session_id`. `reason`
// replaces the list's command in the record when not empty.
absl::Status ApplyServedList(int fd, const std::string& name,
                             const std::string& project,
                             const std::string& undo_root,
                             const std::string& reason,
                             const std::string& session_id,
                             applier::ApplyOutcome* reply) {
  RETURN_IF_ERROR(CheckServedSessionId(session_id));
  // A pipe whose writer never closes would hold the applier forever: the
  // list must be complete before it is sent.
  struct stat st;
  if (::fstat(fd, &st) != 0)
    return LastErrnoStatus(absl::StrCat("fstat ", name));
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " must be a memfd or a file, not a pipe or a socket"));
  }
  ASSIGN_OR_RETURN(ChangeSet change_set,
                   ReadChangeSetForProject(fd, name, project));
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
  ASSIGN_OR_RETURN(ApplyResult result, ApplyChangeSet(change_set, options));
  FillFromResult(result, /*undo=*/false, reply);
  if (result.outcome == ApplyOutcome::kApplied) {
    reply->set_line(kAppliedLine);
    reply->set_undo_id(result.undo_id);
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
  if (result.outcome == ApplyOutcome::kApplied) reply->set_line(UndoneLine(id));
  return absl::OkStatus();
}

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
        return ApplyServedList(
            fd.get(),
            absl::StrCat("the change list of ApplyChangeSet seq ",
                         request.seq()),
            places.project, places.undo_root, request.apply().reason(),
            request.apply().session_id(), reply->mutable_applied());
      });
  dispatcher.On(
      applier::ApplierRequest::kUndo, {kServing},
      [&](const applier::ApplierRequest& request, std::vector<UniqueFd>&,
          applier::ApplierReply* reply) -> absl::Status {
        return UndoServedApply(
            places.project, places.undo_root, request.undo().undo_id(),
            request.undo().session_id(), reply->mutable_undone());
      });
  return dispatcher.Serve(channel);
}

}  // namespace garuda
