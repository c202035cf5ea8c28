// The apply: the checks against the project and the plan of its steps
// (transaction.h); transaction.cc runs them. The checks that need no
// project are in checks.cc, the undo store in undo_store.cc, the journal in
// journal.cc, recovery in recover.cc.
#include "lib/apply/apply.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/apply/checks.h"
#include "lib/apply/journal.h"
#include "lib/apply/paths.h"
#include "lib/apply/recover.h"
#include "lib/apply/scope_refusal.h"
#include "lib/apply/signals.h"
#include "lib/apply/transaction.h"
#include "lib/apply/undo_store.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"
#include "lib/changeset/beneath.h"
#include "lib/lockdown/landlock.h"

namespace garuda {
namespace apply_internal {

absl::StatusOr<ApplyResult> Applier::Run() {
  ApplyResult result;
  CheckEntries(change_set_, &result.problems);
  if (options_.write_scope) {
    RefuseOutsideScope(change_set_, *options_.write_scope, &result.problems);
  }
  if (!result.problems.empty()) {
    result.outcome = ApplyOutcome::kRefused;
    return result;
  }
  ASSIGN_OR_RETURN(UniqueFd root, OpenRoot(options_.project));
  folders_.set_root(std::move(root));
  std::optional<DeferredTerminationSignals> deferred;
  // One apply at a time in a project, and whatever an interrupted one
  // left is finished or reversed before this one looks at the project.
  if (!options_.undo_root.empty()) {
    ASSIGN_OR_RETURN(undo_folder_,
                     UndoFolder(options_.undo_root, options_.project));
    if (options_.dry_run) {
      std::vector<std::string> waiting =
          apply_internal::InterruptedApplies(undo_folder_);
      for (const std::string& id : waiting) {
        result.problems.push_back(
            absl::StrCat("apply ", id,
                         " in this project is still running, or was "
                         "interrupted and is not recovered yet "
                         "(garuda-applier recover)"));
      }
      if (!waiting.empty()) {
        result.outcome = ApplyOutcome::kRefused;
        return result;
      }
    } else {
      // Recovery too is held back from signals (it is also safe to redo:
      // it looks at the project for each step).
      deferred.emplace();
      ASSIGN_OR_RETURN(lock_, apply_internal::LockUndoFolder(undo_folder_));
      ASSIGN_OR_RETURN(std::vector<RecoveryResult> recovered,
                       apply_internal::RecoverLocked(
                           undo_folder_, folders_.root(), options_.project));
      for (const RecoveryResult& one : recovered) {
        result.recovered.push_back(one.Line());
      }
    }
  }
  std::vector<ResolvedLink> links;
  RETURN_IF_ERROR(
      CheckLinks(change_set_, folders_.root(), &links, &result.problems));
  if (!result.problems.empty()) {
    result.outcome = ApplyOutcome::kRefused;
    return result;
  }
  RETURN_IF_ERROR(CheckProject(&result));
  if (!result.problems.empty() || options_.dry_run) return result;
  result.paths = change_set_.changes.size();
  if (change_set_.changes.empty()) return result;

  // From the first write on, a signal waits for the apply to be whole or
  // put back (Pending() is asked between steps); one that came during the
  // check ends it here, before anything is written.
  if (!deferred) deferred.emplace();
  if (int signal = DeferredTerminationSignals::Pending()) {
    return absl::CancelledError(absl::StrCat(
        "interrupted by signal ", signal, " (", strsignal(signal),
        ") before anything was written"));
  }
  id_ = apply_internal::NewUndoId();
  if (!options_.undo_root.empty()) {
    ASSIGN_OR_RETURN(record_, apply_internal::WriteUndoRecord(
                                  change_set_, base_contents_, folders_.root(),
                                  options_, id_));
    result.undo_id = id_;
  }
  absl::Status status = Prepare();
  if (status.ok()) status = Execute();
  if (!status.ok()) return Abandon(status, &result);
  Commit();
  return result;
}

absl::Status Applier::CheckProject(ApplyResult* result) {
  std::set<std::string> removed;  // paths whose current content goes away
  for (const Change& change : change_set_.changes) {
    const ChangeEntry& entry = change.entry;
    if (entry.new_type() != FILE_TYPE_DIRECTORY ||
        entry.base().type() != FILE_TYPE_DIRECTORY) {
      if (entry.base().type() != FILE_TYPE_ABSENT) removed.insert(entry.path());
    }
    by_path_[entry.path()] = &entry;
  }
  auto conflict = [result](const std::string& shown, std::string problem) {
    if (result->outcome != ApplyOutcome::kRefused) {
      result->outcome = ApplyOutcome::kConflict;
    }
    result->conflicts.push_back(shown);
    result->problems.push_back(std::move(problem));
  };
  for (const Change& change : change_set_.changes) {
    const ChangeEntry& entry = change.entry;
    std::string shown = VisiblePath(entry.path());
    // The pre-image of a file is read once, here, and kept for the undo
    // record.
    std::string* content = nullptr;
    if (!options_.undo_root.empty() && !options_.dry_run &&
        entry.base().type() == FILE_TYPE_REGULAR) {
      content = &base_contents_[entry.path()];
    }
    absl::StatusOr<Fingerprint> now =
        folders_.FingerprintOf(entry.path(), content);
    if (UnderReplacedPath(entry.path())) {
      // A link or file above it that this list turns into a folder: the
      // path is new, beneath a folder the apply makes.
      Fingerprint absent;
      absent.set_type(FILE_TYPE_ABSENT);
      now = absent;
    }
    if (absl::IsFailedPrecondition(now.status())) {
      result->outcome = ApplyOutcome::kRefused;
      result->problems.push_back(
          absl::StrCat(shown, ": a write through a symbolic link (",
                       now.status().message(), ")"));
      continue;
    }
    RETURN_IF_ERROR(now.status());
    if (!SameFingerprint(*now, entry.base())) {
      conflict(
          shown,
          absl::StrCat(shown,
                       ": changed in the project since the list was made (now ",
                       DescribeFingerprint(*now), ", the list expected ",
                       DescribeFingerprint(entry.base()), ")"));
      continue;
    }
    // A folder that goes away must hold nothing the list does not remove.
    if (entry.base().type() == FILE_TYPE_DIRECTORY &&
        removed.count(entry.path())) {
      ASSIGN_OR_RETURN(
          UniqueFd folder,
          OpenBeneath(folders_.root(), entry.path(), O_RDONLY | O_DIRECTORY));
      for (const std::string& name : ListFolderNames(folder.get())) {
        std::string child = absl::StrCat(entry.path(), "/", name);
        if (!removed.count(child)) {
          conflict(shown, absl::StrCat(shown, ": the folder holds ",
                                       VisiblePath(child),
                                       ", which the change list does not "
                                       "remove"));
        }
      }
    }
    // A new path needs folders above it: listed ones, existing ones that
    // stay, or missing ones (made by the apply).
    if (entry.new_type() == FILE_TYPE_ABSENT) continue;
    for (std::string parent = Parent(entry.path()); !parent.empty();
         parent = Parent(parent)) {
      if (by_path_.count(parent)) break;  // checked by CheckEntries
      absl::StatusOr<Fingerprint> above = folders_.FingerprintOf(parent);
      if (!above.ok() && !absl::IsFailedPrecondition(above.status())) {
        return above.status();
      }
      if (!above.ok() || above->type() == FILE_TYPE_SYMLINK) {
        result->outcome = ApplyOutcome::kRefused;
        result->problems.push_back(
            absl::StrCat(shown, ": a write through the symbolic link ",
                         VisiblePath(parent)));
        break;
      }
      if (above->type() == FILE_TYPE_DIRECTORY) break;
      if (above->type() != FILE_TYPE_ABSENT) {
        conflict(shown, absl::StrCat(shown, ": ", VisiblePath(parent),
                                     " is not a folder in the project"));
        break;
      }
    }
  }
  return absl::OkStatus();
}

bool Applier::UnderReplacedPath(const std::string& path) const {
  for (std::string parent = Parent(path); !parent.empty();
       parent = Parent(parent)) {
    auto it = by_path_.find(parent);
    if (it != by_path_.end() &&
        it->second->base().type() != FILE_TYPE_DIRECTORY &&
        it->second->base().type() != FILE_TYPE_ABSENT) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<UniqueFd> ProjectFolders::Open(const std::string& path) const {
  return OpenBeneath(root_.get(), path, O_RDONLY | O_DIRECTORY);
}

absl::StatusOr<Held> ProjectFolders::Cached(const std::string& path) {
  auto it = cached_.find(path);
  if (it != cached_.end()) return it->second;
  ASSIGN_OR_RETURN(UniqueFd fd, Open(path));
  Held held = std::make_shared<UniqueFd>(std::move(fd));
  cached_.emplace(path, held);
  return held;
}

void ProjectFolders::Forget(const std::string& path) {
  for (auto it = cached_.lower_bound(path); it != cached_.end();) {
    if (it->first != path && !absl::StartsWith(it->first, path + "/")) break;
    it = cached_.erase(it);
  }
}

absl::StatusOr<Fingerprint> ProjectFolders::FingerprintOf(
    const std::string& path, std::string* content) {
  absl::StatusOr<Held> parent = Cached(Parent(path));
  if (absl::IsNotFound(parent.status())) {
    Fingerprint absent;
    absent.set_type(FILE_TYPE_ABSENT);
    return absent;
  }
  RETURN_IF_ERROR(parent.status());
  return FingerprintAt((*parent)->get(), Basename(path), path, content);
}

absl::Status Applier::Plan() {
  plan_.work_name = absl::StrCat(".garuda-apply-", id_);
  std::vector<const Change*> order;
  for (const Change& change : change_set_.changes) order.push_back(&change);
  int counter = 0;
  struct stat root_stat;
  if (::fstat(folders_.root(), &root_stat) != 0) {
    return LastErrnoStatus("fstat(the project)");
  }
  const dev_t root_device = root_stat.st_dev;
  absl::StatusOr<int> landlock_abi = LandlockAbiVersion();
  const bool renames_across_folders = !landlock_abi.ok() || *landlock_abi != 1;
  for (const Change* change : order) {
    const ChangeEntry& entry = change->entry;
    if (entry.new_type() != FILE_TYPE_REGULAR &&
        entry.new_type() != FILE_TYPE_SYMLINK) {
      continue;
    }
    // In the work folder, never beside the file it replaces: a folder of
    // the project that the person moves away during the apply (out of the
    // project, beyond the applier's Landlock domain) then holds nothing of
    // the applier's to remove. Beside the target only where a rename from
    // the work folder cannot reach it: another file system mounted in the
    // project (EXDEV), or Landlock ABI 1, which refuses every rename
    // between folders.
    std::string parent = Parent(entry.path());
    bool stays = true;  // no folder above it is replaced by the list
    for (std::string p = parent; !p.empty(); p = Parent(p)) {
      auto it = by_path_.find(p);
      if (it != by_path_.end() &&
          it->second->base().type() != FILE_TYPE_DIRECTORY) {
        stays = false;
      }
    }
    absl::StatusOr<Held> folder = absl::NotFoundError("replaced");
    if (stays) folder = folders_.Cached(parent);
    if (!folder.ok() && !absl::IsNotFound(folder.status())) {
      return folder.status();
    }
    bool beside = false;
    if (folder.ok()) {
      struct stat st;
      if (::fstat((*folder)->get(), &st) != 0) {
        return LastErrnoStatus(
            absl::StrCat("fstat(", VisiblePath(parent), ")"));
      }
      beside = !renames_across_folders || st.st_dev != root_device;
    }
    std::string name = absl::StrCat(".garuda-new-", id_, "-", ++counter);
    temp_of_[&entry] = {name, !beside};
    plan_.temps.push_back({beside ? parent : plan_.work_name, name});
  }
  std::sort(order.begin(), order.end(), [](const Change* a, const Change* b) {
    size_t da = Depth(a->entry.path()), db = Depth(b->entry.path());
    return da != db ? da > db : a->entry.path() > b->entry.path();
  });
  for (const Change* change : order) {
    const ChangeEntry& entry = change->entry;
    FileType base = entry.base().type();
    if (base == FILE_TYPE_ABSENT || base == entry.new_type()) continue;
    Add(StepKind::kMoveAside, &entry, absl::StrCat("old-", ++counter), true);
  }
  std::reverse(order.begin(), order.end());
  std::set<std::string> made;
  for (const Change* change : order) {
    const ChangeEntry& entry = change->entry;
    FileType base = entry.base().type();
    switch (entry.new_type()) {
      case FILE_TYPE_DIRECTORY:
        if (base == FILE_TYPE_DIRECTORY) {
          if (entry.base().mode() == entry.new_mode()) break;
          Add(StepKind::kChangeMode, &entry, "", false, entry.new_mode(),
              entry.base().mode());
          break;
        }
        RETURN_IF_ERROR(PlanParents(entry.path(), &made));
        Add(StepKind::kMakeFolder, &entry, "", false, entry.new_mode());
        made.insert(entry.path());
        break;
      case FILE_TYPE_REGULAR:
      case FILE_TYPE_SYMLINK: {
        RETURN_IF_ERROR(PlanParents(entry.path(), &made));
        const auto& [temp, in_work] = temp_of_.at(&entry);
        Add(base == entry.new_type() ? StepKind::kExchange : StepKind::kPlace,
            &entry, temp, in_work);
        break;
      }
      default:
        break;
    }
  }
  return absl::OkStatus();
}

void Applier::Add(StepKind kind, const ChangeEntry* entry, std::string temp,
                  bool in_work, uint32_t mode, uint32_t old_mode,
                  const std::string& path) {
  Step step;
  step.plan.kind = kind;
  step.plan.path = entry != nullptr ? entry->path() : path;
  step.plan.temp = std::move(temp);
  step.plan.temp_in_work = in_work;
  step.plan.mode = mode;
  step.plan.old_mode = old_mode;
  step.entry = entry;
  steps_.push_back(std::move(step));
}

absl::Status Applier::PlanParents(const std::string& path,
                                  std::set<std::string>* made) {
  std::vector<std::string> missing;
  for (std::string parent = Parent(path); !parent.empty();
       parent = Parent(parent)) {
    if (by_path_.count(parent) || made->count(parent)) break;
    ASSIGN_OR_RETURN(Fingerprint above, folders_.FingerprintOf(parent));
    if (above.type() == FILE_TYPE_DIRECTORY) break;
    if (above.type() != FILE_TYPE_ABSENT) {
      return absl::FailedPreconditionError(
          absl::StrCat(VisiblePath(parent), " is not a folder"));
    }
    missing.push_back(parent);
  }
  for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
    Add(StepKind::kMakeFolder, nullptr, "", false, 0755, 0, *it);
    made->insert(*it);
  }
  return absl::OkStatus();
}

}  // namespace apply_internal

absl::StatusOr<ApplyResult> ApplyChangeSet(const ChangeSet& change_set,
                                           const ApplyOptions& options) {
  apply_internal::Applier applier(change_set, options);
  return applier.Run();
}

}  // namespace garuda
