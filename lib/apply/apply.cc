// The transaction: check, plan, journal, temporaries, renames (each one
// confirmed), and the way back. The checks are in checks.cc, the undo
// store in undo_store.cc, the journal in journal.cc, recovery in
// recover.cc.
#include "lib/apply/apply.h"

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
#include "lib/question/visible.h"

namespace garuda {
namespace {

using apply_internal::Depth;
using apply_internal::JournalPlan;
using apply_internal::ListFolderNames;
using apply_internal::Parent;
using apply_internal::PlannedStep;
using apply_internal::PlannedTemp;
using apply_internal::StepKind;

// A folder held open for as long as a step or a temporary needs it: what
// is put back or removed goes where the folder is now, even if it was
// moved away during the apply, never to whatever took its old path.
using Held = std::shared_ptr<UniqueFd>;

struct Step {
  PlannedStep plan;
  const ChangeEntry* entry = nullptr;  // null: a folder made for a new path
  Held parent;       // the folder of plan.path, once the step ran
  Held temp_folder;  // the folder of plan.temp
  Held self;         // kChangeMode: the folder itself
};

struct Temp {
  Held folder;
  std::string name;
  std::string shown;  // for messages: where it is
};

// A path changed between the check and its rename (or during the apply):
// the apply ends as a conflict once everything is put back.
constexpr char kChangedDuringApply[] =
    "changed in the project during the apply";

class Applier {
 public:
  Applier(const ChangeSet& change_set, const ApplyOptions& options)
      : change_set_(change_set), options_(options) {}

  absl::StatusOr<ApplyResult> Run() {
    ApplyResult result;
    CheckEntries(change_set_, &result.problems);
    if (!result.problems.empty()) {
      result.outcome = ApplyOutcome::kRefused;
      return result;
    }
    ASSIGN_OR_RETURN(root_, OpenRoot(options_.project));
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
                           " was interrupted and is not recovered yet "
                           "(garuda-applier recover)"));
        }
        if (!waiting.empty()) {
          result.outcome = ApplyOutcome::kRefused;
          return result;
        }
      } else {
        ASSIGN_OR_RETURN(lock_, apply_internal::LockUndoFolder(undo_folder_));
        ASSIGN_OR_RETURN(std::vector<RecoveryResult> recovered,
                         apply_internal::RecoverLocked(
                             undo_folder_, root_.get(), options_.project));
        for (const RecoveryResult& one : recovered) {
          result.recovered.push_back(one.Line());
        }
      }
    }
    std::vector<ResolvedLink> links;
    RETURN_IF_ERROR(
        CheckLinks(change_set_, root_.get(), &links, &result.problems));
    if (!result.problems.empty()) {
      result.outcome = ApplyOutcome::kRefused;
      return result;
    }
    RETURN_IF_ERROR(CheckProject(&result));
    if (!result.problems.empty() || options_.dry_run) return result;
    result.paths = change_set_.changes.size();
    if (change_set_.changes.empty()) return result;

    // From the first write on, a signal waits for the apply to be whole or
    // put back (Pending() is asked between steps).
    DeferredTerminationSignals deferred;
    id_ = apply_internal::NewUndoId();
    if (!options_.undo_root.empty()) {
      ASSIGN_OR_RETURN(
          record_, apply_internal::WriteUndoRecord(change_set_, base_contents_,
                                                   root_.get(), options_, id_));
      result.undo_id = id_;
    }
    absl::Status status = Prepare();
    if (status.ok()) status = Execute();
    if (!status.ok()) return Abandon(status, &result);
    Commit();
    return result;
  }

 private:
  // Refusals that need the project, and the conflict check.
  absl::Status CheckProject(ApplyResult* result) {
    std::set<std::string> removed;  // paths whose current content goes away
    for (const Change& change : change_set_.changes) {
      const ChangeEntry& entry = change.entry;
      if (entry.new_type() != FILE_TYPE_DIRECTORY ||
          entry.base().type() != FILE_TYPE_DIRECTORY) {
        if (entry.base().type() != FILE_TYPE_ABSENT)
          removed.insert(entry.path());
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
          ProjectFingerprint(entry.path(), content);
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
            absl::StrCat(
                shown, ": changed in the project since the list was made (now ",
                DescribeFingerprint(*now), ", the list expected ",
                DescribeFingerprint(entry.base()), ")"));
        continue;
      }
      // A folder that goes away must hold nothing the list does not remove.
      if (entry.base().type() == FILE_TYPE_DIRECTORY &&
          removed.count(entry.path())) {
        ASSIGN_OR_RETURN(UniqueFd folder, OpenBeneath(root_.get(), entry.path(),
                                                      O_RDONLY | O_DIRECTORY));
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
        absl::StatusOr<Fingerprint> above = ProjectFingerprint(parent);
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

  // True when a folder above `path` is, in the project, something the list
  // replaces (a symlink or a file that becomes a folder).
  bool UnderReplacedPath(const std::string& path) const {
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

  absl::StatusOr<UniqueFd> Folder(const std::string& path) {
    return OpenBeneath(root_.get(), path, O_RDONLY | O_DIRECTORY);
  }

  // Folders opened once beneath the root (no link on the way) and kept
  // open: 10 000 files in 100 folders need 100 opens, not 70 000. An fd
  // follows its folder, so a folder moved aside is forgotten at once
  // (ForgetFolders), with everything beneath it; steps keep their own
  // reference.
  absl::StatusOr<Held> CachedFolder(const std::string& path) {
    auto it = folders_.find(path);
    if (it != folders_.end()) return it->second;
    ASSIGN_OR_RETURN(UniqueFd fd, Folder(path));
    Held held = std::make_shared<UniqueFd>(std::move(fd));
    folders_.emplace(path, held);
    return held;
  }

  void ForgetFolders(const std::string& path) {
    for (auto it = folders_.lower_bound(path); it != folders_.end();) {
      if (it->first != path && !absl::StartsWith(it->first, path + "/")) break;
      it = folders_.erase(it);
    }
  }

  // FingerprintAt through the folder cache: a missing parent, or one that
  // is not a folder, means absent; a symlinked one is FAILED_PRECONDITION.
  absl::StatusOr<Fingerprint> ProjectFingerprint(
      const std::string& path, std::string* content = nullptr) {
    absl::StatusOr<Held> parent = CachedFolder(Parent(path));
    if (absl::IsNotFound(parent.status())) {
      Fingerprint absent;
      absent.set_type(FILE_TYPE_ABSENT);
      return absent;
    }
    RETURN_IF_ERROR(parent.status());
    return FingerprintAt((*parent)->get(), Basename(path), path, content);
  }

  // Every step decided before the project is touched, so that the journal
  // can hold them all: the temporaries' names and folders, removals deepest
  // first, then folders and new paths shallowest first.
  absl::Status Plan() {
    plan_.work_name = absl::StrCat(".garuda-apply-", id_);
    std::vector<const Change*> order;
    for (const Change& change : change_set_.changes) order.push_back(&change);
    int counter = 0;
    for (const Change* change : order) {
      const ChangeEntry& entry = change->entry;
      if (entry.new_type() != FILE_TYPE_REGULAR &&
          entry.new_type() != FILE_TYPE_SYMLINK) {
        continue;
      }
      // Beside the target when its folder exists and stays, else in the
      // work folder.
      std::string parent = Parent(entry.path());
      bool beside = true;
      for (std::string p = parent; !p.empty(); p = Parent(p)) {
        auto it = by_path_.find(p);
        if (it != by_path_.end() &&
            it->second->base().type() != FILE_TYPE_DIRECTORY) {
          beside = false;
        }
      }
      if (beside) {
        absl::StatusOr<Held> folder = CachedFolder(parent);
        if (!folder.ok() && !absl::IsNotFound(folder.status())) {
          return folder.status();
        }
        beside = folder.ok();
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

  void Add(StepKind kind, const ChangeEntry* entry, std::string temp,
           bool in_work, uint32_t mode = 0, uint32_t old_mode = 0,
           const std::string& path = "") {
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

  // Missing folders above `path` (0755), made before it.
  absl::Status PlanParents(const std::string& path,
                           std::set<std::string>* made) {
    std::vector<std::string> missing;
    for (std::string parent = Parent(path); !parent.empty();
         parent = Parent(parent)) {
      if (by_path_.count(parent) || made->count(parent)) break;
      ASSIGN_OR_RETURN(Fingerprint above, ProjectFingerprint(parent));
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

  // The plan, the journal, then the work folder and every new content in a
  // temporary, synced before the first rename.
  absl::Status Prepare() {
    RETURN_IF_ERROR(Plan());
    for (Step& step : steps_) plan_.steps.push_back(step.plan);
    if (!record_.empty()) {
      ASSIGN_OR_RETURN(journal_, apply_internal::WriteJournal(record_, plan_));
    }
    if (::mkdirat(root_.get(), plan_.work_name.c_str(), 0700) != 0) {
      return LastErrnoStatus(
          absl::StrCat("mkdir(", plan_.work_name, ") in the project"));
    }
    ASSIGN_OR_RETURN(UniqueFd work, Folder(plan_.work_name));
    work_ = std::make_shared<UniqueFd>(std::move(work));
    for (const Change& change : change_set_.changes) {
      auto it = temp_of_.find(&change.entry);
      if (it == temp_of_.end()) continue;
      const auto& [name, in_work] = it->second;
      Held folder = work_;
      if (!in_work) {
        ASSIGN_OR_RETURN(folder, CachedFolder(Parent(change.entry.path())));
      }
      // Known before it exists, so that no failure below leaves it behind.
      temps_.push_back({folder, name,
                        in_work ? plan_.work_name
                                : VisiblePath(Parent(change.entry.path()))});
      RETURN_IF_ERROR(WriteTemporary(change, folder->get(), name));
    }
    // For a large list one syncfs of the project's file system instead of
    // one fsync per file (10 000 fsyncs cost a minute on ext4); a small one
    // was synced file by file (a syncfs also waits for every other writer
    // of that file system: seconds on a busy disk, for one file).
    if (!SyncEach() && ::syncfs(root_.get()) != 0) {
      return LastErrnoStatus("syncfs(the project's file system)");
    }
    return absl::OkStatus();
  }

  // Writes the new content of `change` to a synced temporary file (or makes
  // the temporary link) in `folder`, named `name`.
  absl::Status WriteTemporary(const Change& change, int folder,
                              const std::string& name) {
    const ChangeEntry& entry = change.entry;
    if (entry.new_type() == FILE_TYPE_SYMLINK) {
      if (::symlinkat(entry.link_target().c_str(), folder, name.c_str()) != 0) {
        return LastErrnoStatus(
            absl::StrCat("symlink(", VisiblePath(entry.path()), ")"));
      }
      return absl::OkStatus();
    }
    int fd =
        ::openat(folder, name.c_str(),
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

  absl::Status Execute() {
    for (size_t i = 0; i < steps_.size(); ++i) {
      int number = static_cast<int>(i) + 1;
      if (options_.before_step) RETURN_IF_ERROR(options_.before_step(number));
      if (int signal = DeferredTerminationSignals::Pending()) {
        return absl::CancelledError(absl::StrCat(
            "interrupted by signal ", signal, " (", strsignal(signal), ")"));
      }
      RETURN_IF_ERROR(RunStep(steps_[i]));
      ++done_;
      RETURN_IF_ERROR(ConfirmStep(steps_[i]));
      if (options_.after_step) RETURN_IF_ERROR(options_.after_step(number));
    }
    // Make the renames durable before the apply counts as done: the
    // folders whose entries changed, or the whole file system.
    if (!SyncEach()) {
      if (::syncfs(root_.get()) != 0) {
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
      RETURN_IF_ERROR(
          options_.before_step(static_cast<int>(steps_.size()) + 1));
    }
    return absl::OkStatus();
  }

  absl::Status Changed(const Step& step) {
    conflict_path_ = step.plan.path;
    return absl::AbortedError(
        absl::StrCat(VisiblePath(step.plan.path), ": ", kChangedDuringApply));
  }

  // One step; it counts as done (and is put back on failure) only when the
  // call succeeded.
  absl::Status RunStep(Step& step) {
    const std::string& path = step.plan.path;
    std::string name = Basename(path);
    ASSIGN_OR_RETURN(step.parent, CachedFolder(Parent(path)));
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
        if (result == 0) ForgetFolders(path);
        break;
      case StepKind::kExchange:
        result = ::renameat2(temp_folder, temp, parent, name.c_str(),
                             RENAME_EXCHANGE);
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
        ASSIGN_OR_RETURN(UniqueFd self, Folder(path));
        step.self = std::make_shared<UniqueFd>(std::move(self));
        struct stat st;
        if (::fstat(step.self->get(), &st) != 0) {
          return LastErrnoStatus(
              absl::StrCat("fstat(", VisiblePath(path), ")"));
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

  // What a rename swapped out or moved aside must be what the check saw:
  // a save in between would otherwise be lost (and the undo record would
  // hold the older content). A new folder gets its mode.
  absl::Status ConfirmStep(Step& step) {
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
          return LastErrnoStatus(
              absl::StrCat("chmod(", VisiblePath(path), ")"));
        }
        return absl::OkStatus();
      }
      default:
        return absl::OkStatus();
    }
  }

  // A list this small is synced file by file and folder by folder.
  bool SyncEach() const { return change_set_.changes.size() <= kSyncEachLimit; }
  static constexpr size_t kSyncEachLimit = 32;

  // The apply failed or was interrupted: put back, clean up, and say what
  // the project holds now.
  absl::StatusOr<ApplyResult> Abandon(const absl::Status& status,
                                      ApplyResult* result) {
    absl::Status rollback = RollBack();
    std::vector<std::string> left = RemoveTemporaries();
    if (!rollback.ok()) {
      // The journal stays: recovery can try again once the cause is fixed.
      return absl::DataLossError(absl::StrCat(
          "apply failed: ", status.message(),
          "; putting the project back failed too: ", rollback.message(),
          left.empty()
              ? ""
              : absl::StrCat("; left behind: ", absl::StrJoin(left, ", ")),
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
                           absl::StrJoin(left, ", "), ")");
    if (absl::IsAborted(status) && !conflict_path_.empty()) {
      result->outcome = ApplyOutcome::kConflict;
      result->paths = 0;
      result->conflicts.push_back(VisiblePath(conflict_path_));
      result->problems.push_back(absl::StrCat(
          status.message(), "; everything was put back", leftovers));
      return *result;
    }
    return absl::Status(status.code(),
                        absl::StrCat("apply failed, the project is as before",
                                     leftovers, ": ", status.message()));
  }

  // Undoes the steps done, newest first, through the folders they hold.
  absl::Status RollBack() {
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
      if (result != 0 && first.ok()) {
        first = LastErrnoStatus(
            absl::StrCat("put back ", VisiblePath(step.plan.path)));
      }
    }
    done_ = 0;
    return first;
  }

  // Removes every temporary and the work folder, through the folders held
  // open; returns what could not be removed.
  std::vector<std::string> RemoveTemporaries() {
    std::vector<std::string> left;
    for (const Temp& temp : temps_) {
      if (::unlinkat(temp.folder->get(), temp.name.c_str(), 0) != 0 &&
          errno != ENOENT) {
        left.push_back(absl::StrCat(temp.shown, "/", temp.name, " (",
                                    strerror(errno), ")"));
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
      if (::unlinkat(root_.get(), plan_.work_name.c_str(), AT_REMOVEDIR) != 0 &&
          errno != ENOENT) {
        left.push_back(
            absl::StrCat(plan_.work_name, " (", strerror(errno), ")"));
      }
    }
    return left;
  }

  // The apply is done: what was moved aside or swapped out goes away, then
  // the journal (from here on there is nothing to recover).
  void Commit() {
    (void)RemoveTemporaries();
    folders_.clear();
    if (journal_) {
      journal_ = UniqueFd();
      ::unlink(JoinPath(record_, apply_internal::kJournalName).c_str());
    }
  }

  const ChangeSet& change_set_;
  const ApplyOptions& options_;
  UniqueFd root_;
  UniqueFd lock_;
  UniqueFd journal_;
  Held work_;
  std::string id_;
  std::string undo_folder_;
  std::string record_;
  JournalPlan plan_;
  std::map<std::string, const ChangeEntry*> by_path_;
  std::map<const ChangeEntry*, std::pair<std::string, bool>> temp_of_;
  std::vector<Temp> temps_;
  std::vector<Step> steps_;
  size_t done_ = 0;
  std::string conflict_path_;
  std::map<std::string, Held> folders_;               // see CachedFolder
  std::map<std::string, std::string> base_contents_;  // pre-images for undo
};

}  // namespace

absl::StatusOr<ApplyResult> ApplyChangeSet(const ChangeSet& change_set,
                                           const ApplyOptions& options) {
  Applier applier(change_set, options);
  return applier.Run();
}

}  // namespace garuda
