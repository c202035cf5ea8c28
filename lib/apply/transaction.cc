// The apply's writes: the journal, the temporaries, each rename confirmed
// against what was checked, the commit, and the way back through the
// folders held open.
#include "lib/apply/transaction.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/apply/checks.h"
#include "lib/apply/journal.h"
#include "lib/apply/paths.h"
#include "lib/apply/recover.h"
#include "lib/apply/signals.h"
#include "lib/apply/undo_store.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/changeset/beneath.h"
#include "lib/base/visible.h"

namespace garuda {
namespace apply_internal {
namespace {

// The first few of `names` and how many more: a message a person reads.
std::string Listed(const std::vector<std::string>& names) {
  constexpr size_t kShown = 8;
  if (names.size() <= kShown) return absl::StrJoin(names, ", ");
  std::vector<std::string> first(names.begin(), names.begin() + kShown);
  return absl::StrCat(absl::StrJoin(first, ", "), " and ",
                      names.size() - kShown, " more");
}

}  // namespace

absl::Status Applier::Prepare() {
  RETURN_IF_ERROR(Plan());
  for (Step& step : steps_) plan_.steps.push_back(step.plan);
  if (!record_.empty()) {
    ASSIGN_OR_RETURN(journal_, apply_internal::WriteJournal(record_, plan_));
  }
  if (::mkdirat(folders_.root(), plan_.work_name.c_str(), 0700) != 0) {
    return LastErrnoStatus(
        absl::StrCat("mkdir(", plan_.work_name, ") in the project"));
  }
  ASSIGN_OR_RETURN(UniqueFd work, folders_.Open(plan_.work_name));
  work_ = std::make_shared<UniqueFd>(std::move(work));
  for (const Change& change : change_set_.changes) {
    auto it = temp_of_.find(&change.entry);
    if (it == temp_of_.end()) continue;
    const auto& [name, in_work] = it->second;
    Held folder = work_;
    if (!in_work) {
      ASSIGN_OR_RETURN(folder, folders_.Cached(Parent(change.entry.path())));
    }
    // Known before it exists, so that no failure below leaves it behind.
    temps_.push_back(
        {folder, name,
         in_work ? plan_.work_name : VisiblePath(Parent(change.entry.path()))});
    RETURN_IF_ERROR(WriteTemporary(change, folder->get(), name));
  }
  // For a large list one syncfs of the project's file system instead of
  // one fsync per file (10 000 fsyncs cost a minute on ext4); a small one
  // was synced file by file (a syncfs also waits for every other writer
  // of that file system: seconds on a busy disk, for one file).
  if (!SyncEach() && ::syncfs(folders_.root()) != 0) {
    return LastErrnoStatus("syncfs(the project's file system)");
  }
  return absl::OkStatus();
}

absl::Status Applier::WriteTemporary(const Change& change, int folder,
                                     const std::string& name) {
  const ChangeEntry& entry = change.entry;
  if (entry.new_type() == FILE_TYPE_SYMLINK) {
    if (::symlinkat(entry.link_target().c_str(), folder, name.c_str()) != 0) {
      return LastErrnoStatus(
          absl::StrCat("symlink(", VisiblePath(entry.path()), ")"));
    }
    return absl::OkStatus();
  }
  int fd = ::openat(folder, name.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return LastErrnoStatus(absl::StrCat("create a temporary file for ",
                                        VisiblePath(entry.path())));
  }
  UniqueFd file(fd);
  absl::Status status = WriteAll(file.get(), change.content);
  if (status.ok() && ::fchmod(file.get(), entry.new_mode()) != 0) {
    status = LastErrnoStatus("fchmod");
  }
  if (status.ok() && SyncEach() && ::fsync(file.get()) != 0) {
    status = LastErrnoStatus("fsync");
  }
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat(VisiblePath(entry.path()),
                                                    ": ", status.message()));
  }
  return absl::OkStatus();
}

absl::Status Applier::Execute() {
  for (size_t i = 0; i < steps_.size(); ++i) {
    int number = static_cast<int>(i) + 1;
    if (options_.before_step) RETURN_IF_ERROR(options_.before_step(number));
    if (int signal = DeferredTerminationSignals::Pending()) {
      return absl::CancelledError(absl::StrCat("interrupted by signal ", signal,
                                               " (", strsignal(signal), ")"));
    }
    RETURN_IF_ERROR(RunStep(steps_[i]));
    ++done_;
    RETURN_IF_ERROR(ConfirmStep(steps_[i]));
    if (options_.after_step) RETURN_IF_ERROR(options_.after_step(number));
  }
  // Make the renames durable before the apply counts as done: the
  // folders whose entries changed, or the whole file system.
  if (!SyncEach()) {
    if (::syncfs(folders_.root()) != 0) {
      return LastErrnoStatus("syncfs(the project's file system)");
    }
  } else {
    std::set<int> synced;
    for (const Step& step : steps_) {
      for (const Held& folder : {step.parent, step.self}) {
        if (folder && synced.insert(folder->get()).second &&
            ::fsync(folder->get()) != 0) {
          return LastErrnoStatus(absl::StrCat(
              "fsync(the folder of ", VisiblePath(step.plan.path), ")"));
        }
      }
    }
    if (::fsync(work_->get()) != 0) {
      return LastErrnoStatus("fsync(work folder)");
    }
  }
  if (journal_) {
    RETURN_IF_ERROR(apply_internal::MarkCommitted(journal_.get(), record_));
  }
  // One past the last step: done and synced, the temporaries not yet
  // removed.
  if (options_.before_step) {
    RETURN_IF_ERROR(options_.before_step(static_cast<int>(steps_.size()) + 1));
  }
  return absl::OkStatus();
}

absl::Status Applier::Changed(const Step& step) {
  conflict_path_ = step.plan.path;
  return absl::AbortedError(
      absl::StrCat(VisiblePath(step.plan.path), ": ", kChangedDuringApply));
}

absl::Status Applier::RunStep(Step& step) {
  const std::string& path = step.plan.path;
  std::string name = Basename(path);
  ASSIGN_OR_RETURN(step.parent, folders_.Cached(Parent(path)));
  int parent = step.parent->get();
  step.temp_folder = step.plan.temp_in_work ? work_ : step.parent;
  int temp_folder = step.temp_folder->get();
  const char* temp = step.plan.temp.c_str();
  int result = 0;
  std::string what;
  switch (step.plan.kind) {
    case StepKind::kMoveAside:
      result = ::renameat2(parent, name.c_str(), temp_folder, temp,
                           RENAME_NOREPLACE);
      what = "move aside ";
      if (result == 0) folders_.Forget(path);
      break;
    case StepKind::kExchange:
      result =
          ::renameat2(temp_folder, temp, parent, name.c_str(), RENAME_EXCHANGE);
      what = "replace ";
      break;
    case StepKind::kPlace:
      result = ::renameat2(temp_folder, temp, parent, name.c_str(),
                           RENAME_NOREPLACE);
      what = "place ";
      break;
    case StepKind::kMakeFolder:
      result = ::mkdirat(parent, name.c_str(), 0700);
      what = "mkdir ";
      break;
    case StepKind::kChangeMode: {
      ASSIGN_OR_RETURN(UniqueFd self, folders_.Open(path));
      step.self = std::make_shared<UniqueFd>(std::move(self));
      struct stat st;
      if (::fstat(step.self->get(), &st) != 0) {
        return LastErrnoStatus(absl::StrCat("fstat(", VisiblePath(path), ")"));
      }
      if ((st.st_mode & 07777) != step.plan.old_mode) return Changed(step);
      result = ::fchmod(step.self->get(), step.plan.mode);
      what = "chmod ";
      break;
    }
  }
  if (result != 0) {
    // Something took the free name between the check and now: the
    // person's, not ours to replace.
    // Or the path the list replaces or removes is gone already.
    bool gone = errno == ENOENT && (step.plan.kind == StepKind::kExchange ||
                                    step.plan.kind == StepKind::kMoveAside);
    if (errno == EEXIST || errno == ENOTEMPTY || gone) return Changed(step);
    return LastErrnoStatus(absl::StrCat(what, VisiblePath(path)));
  }
  return absl::OkStatus();
}

absl::Status Applier::ConfirmStep(Step& step) {
  const std::string& path = step.plan.path;
  switch (step.plan.kind) {
    case StepKind::kMoveAside:
    case StepKind::kExchange: {
      if (!options_.verify_replaced) return absl::OkStatus();
      ASSIGN_OR_RETURN(Fingerprint out, FingerprintAt(step.temp_folder->get(),
                                                      step.plan.temp, path));
      if (!SameFingerprint(out, step.entry->base())) return Changed(step);
      if (out.type() == FILE_TYPE_DIRECTORY) {
        // Its listed children were moved aside before it (deepest first):
        // anything still in it came during the apply.
        absl::StatusOr<UniqueFd> aside = OpenBeneath(
            step.temp_folder->get(), step.plan.temp, O_RDONLY | O_DIRECTORY);
        RETURN_IF_ERROR(aside.status());
        if (!ListFolderNames(aside->get()).empty()) return Changed(step);
      }
      return absl::OkStatus();
    }
    case StepKind::kMakeFolder: {
      ASSIGN_OR_RETURN(UniqueFd folder,
                       OpenBeneath(step.parent->get(), Basename(path),
                                   O_RDONLY | O_DIRECTORY));
      if (::fchmod(folder.get(), step.plan.mode) != 0) {
        return LastErrnoStatus(absl::StrCat("chmod(", VisiblePath(path), ")"));
      }
      return absl::OkStatus();
    }
    default:
      return absl::OkStatus();
  }
}

absl::StatusOr<ApplyResult> Applier::Abandon(const absl::Status& status,
                                             ApplyResult* result) {
  absl::Status rollback = RollBack();
  std::vector<std::string> left = RemoveTemporaries();
  if (!rollback.ok()) {
    left.insert(left.begin(), not_put_back_.begin(), not_put_back_.end());
    // The journal stays: recovery can try again once the cause is fixed.
    return absl::DataLossError(absl::StrCat(
        "apply failed: ", status.message(),
        "; putting the project back failed too: ", rollback.message(),
        left.empty() ? "" : absl::StrCat("; left behind: ", Listed(left)),
        record_.empty()
            ? std::string()
            : absl::StrCat("; the pre-images are in ", record_,
                           "; run garuda-applier recover once it is "
                           "fixed")));
  }
  journal_ = UniqueFd();
  if (!record_.empty()) apply_internal::RemoveUndoRecord(record_);
  result->undo_id.clear();
  std::string leftovers =
      left.empty()
          ? std::string()
          : absl::StrCat(" (but these temporaries could not be removed: ",
                         Listed(left), ")");
  if (absl::IsAborted(status) && !conflict_path_.empty()) {
    result->outcome = ApplyOutcome::kConflict;
    result->paths = 0;
    result->conflicts.push_back(VisiblePath(conflict_path_));
    result->problems.push_back(
        absl::StrCat(status.message(), "; everything was put back", leftovers));
    return *result;
  }
  return absl::Status(status.code(),
                      absl::StrCat("apply failed, the project is as before",
                                   leftovers, ": ", status.message()));
}

absl::Status Applier::RollBack() {
  absl::Status first;
  for (size_t i = done_; i-- > 0;) {
    const Step& step = steps_[i];
    int parent = step.parent->get();
    int temp_folder = step.temp_folder->get();
    std::string name = Basename(step.plan.path);
    const char* temp = step.plan.temp.c_str();
    int result = 0;
    switch (step.plan.kind) {
      case StepKind::kMoveAside:
        result = ::renameat2(temp_folder, temp, parent, name.c_str(),
                             RENAME_NOREPLACE);
        break;
      case StepKind::kExchange:
        result = ::renameat2(temp_folder, temp, parent, name.c_str(),
                             RENAME_EXCHANGE);
        break;
      case StepKind::kPlace:
        result = ::renameat2(parent, name.c_str(), temp_folder, temp,
                             RENAME_NOREPLACE);
        break;
      case StepKind::kMakeFolder:
        result = ::unlinkat(parent, name.c_str(), AT_REMOVEDIR);
        break;
      case StepKind::kChangeMode:
        result = ::fchmod(step.self->get(), step.plan.old_mode);
        break;
    }
    if (result != 0) {
      const int error = errno;
      // What stays as the apply left it (a folder moved out of the
      // project is beyond the Landlock domain), for the "left behind" list.
      not_put_back_.push_back(absl::StrCat(VisiblePath(step.plan.path),
                                           " (not put back: ", strerror(error),
                                           ")"));
      if (first.ok()) {
        first = ErrnoStatus(
            error, absl::StrCat("put back ", VisiblePath(step.plan.path)));
      }
    }
  }
  done_ = 0;
  return first;
}

std::vector<std::string> Applier::RemoveTemporaries() {
  std::vector<std::string> left;
  for (const Temp& temp : temps_) {
    if (::unlinkat(temp.folder->get(), temp.name.c_str(), 0) != 0 &&
        errno != ENOENT) {
      left.push_back(
          absl::StrCat(temp.shown, "/", temp.name, " (", strerror(errno), ")"));
    }
  }
  if (work_) {
    for (const std::string& name : ListFolderNames(work_->get())) {
      if (::unlinkat(work_->get(), name.c_str(), 0) != 0 &&
          ::unlinkat(work_->get(), name.c_str(), AT_REMOVEDIR) != 0) {
        left.push_back(absl::StrCat(plan_.work_name, "/", name, " (",
                                    strerror(errno), ")"));
      }
    }
    if (::unlinkat(folders_.root(), plan_.work_name.c_str(), AT_REMOVEDIR) !=
            0 &&
        errno != ENOENT) {
      left.push_back(absl::StrCat(plan_.work_name, " (", strerror(errno), ")"));
    }
  }
  return left;
}

void Applier::Commit() {
  (void)RemoveTemporaries();
  folders_.Clear();
  if (journal_) {
    journal_ = UniqueFd();
    ::unlink(JoinPath(record_, apply_internal::kJournalName).c_str());
  }
}

}  // namespace apply_internal
}  // namespace garuda
