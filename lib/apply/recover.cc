#include "lib/apply/recover.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/apply/journal.h"
#include "lib/apply/paths.h"
#include "lib/apply/undo_store.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/changeset/beneath.h"
#include "lib/base/visible.h"

namespace garuda {
namespace apply_internal {
namespace {

struct Sides {
  Fingerprint before;  // what the path held before the apply
  Fingerprint after;   // what the apply puts there
};

Fingerprint Absent() {
  Fingerprint absent;
  absent.set_type(FILE_TYPE_ABSENT);
  return absent;
}

// The state of `name` in `folder` (-1: the folder is missing: absent).
Fingerprint Look(int folder, const std::string& name) {
  if (folder < 0) return Absent();
  absl::StatusOr<Fingerprint> found = FingerprintAt(folder, name, name);
  return found.ok() ? *found : Absent();
}

class Recovery {
 public:
  Recovery(int root_fd, const std::string& record, const JournalPlan& plan,
           std::map<std::string, Sides> sides)
      : root_fd_(root_fd),
        record_(record),
        plan_(plan),
        sides_(std::move(sides)) {
    absl::StatusOr<UniqueFd> work =
        OpenBeneath(root_fd_, plan_.work_name, O_RDONLY | O_DIRECTORY);
    if (work.ok()) work_ = std::move(work).value();
  }

  // Newest step first: each is put back if the project shows it happened.
  void Reverse() {
    for (auto it = plan_.steps.rbegin(); it != plan_.steps.rend(); ++it) {
      const PlannedStep& step = *it;
      absl::StatusOr<UniqueFd> parent = OpenParentBeneath(root_fd_, step.path);
      if (!parent.ok()) continue;  // its folder never came to be
      int folder = parent->get();
      std::string name = Basename(step.path);
      int temp_folder = step.temp_in_work ? work_.get() : folder;
      const char* temp = step.temp.c_str();
      auto sides = sides_.find(step.path);
      int result = 0;
      switch (step.kind) {
        case StepKind::kMoveAside:
          if (Look(temp_folder, step.temp).type() != FILE_TYPE_ABSENT &&
              Look(folder, name).type() == FILE_TYPE_ABSENT) {
            result = ::renameat2(temp_folder, temp, folder, name.c_str(),
                                 RENAME_NOREPLACE);
          }
          break;
        case StepKind::kExchange:
          if (sides != sides_.end() &&
              SameFingerprint(Look(folder, name), sides->second.after) &&
              SameFingerprint(Look(temp_folder, step.temp),
                              sides->second.before)) {
            result = ::renameat2(temp_folder, temp, folder, name.c_str(),
                                 RENAME_EXCHANGE);
          }
          break;
        case StepKind::kPlace:
          if (sides != sides_.end() &&
              Look(temp_folder, step.temp).type() == FILE_TYPE_ABSENT &&
              SameFingerprint(Look(folder, name), sides->second.after)) {
            result = ::unlinkat(folder, name.c_str(), 0);
          }
          break;
        case StepKind::kMakeFolder:
          if (Look(folder, name).type() == FILE_TYPE_DIRECTORY) {
            result = ::unlinkat(folder, name.c_str(), AT_REMOVEDIR);
          }
          break;
        case StepKind::kChangeMode: {
          Fingerprint now = Look(folder, name);
          if (now.type() == FILE_TYPE_DIRECTORY && now.mode() == step.mode) {
            absl::StatusOr<UniqueFd> self =
                OpenBeneath(folder, name, O_RDONLY | O_DIRECTORY);
            result = self.ok() ? ::fchmod(self->get(), step.old_mode) : -1;
          }
          break;
        }
      }
      if (result != 0) {
        problems_.push_back(absl::StrCat(VisiblePath(step.path), " (",
                                         std::strerror(errno), ")"));
      }
    }
  }

  // The temporaries and the work folder.
  void Clean() {
    for (const PlannedTemp& temp : plan_.temps) {
      int folder = -1;
      UniqueFd opened;
      if (temp.folder == plan_.work_name) {
        folder = work_.get();
      } else {
        // The folder that holds the temporary ("" is the root).
        absl::StatusOr<UniqueFd> fd = OpenParentBeneath(
            root_fd_,
            temp.folder.empty() ? temp.name : JoinPath(temp.folder, temp.name));
        if (!fd.ok()) continue;
        opened = std::move(fd).value();
        folder = opened.get();
      }
      if (folder >= 0 && ::unlinkat(folder, temp.name.c_str(), 0) != 0 &&
          errno != ENOENT) {
        problems_.push_back(absl::StrCat(VisiblePath(temp.name), " in ",
                                         VisiblePath(temp.folder), " (",
                                         std::strerror(errno), ")"));
      }
    }
    if (work_) {
      for (const std::string& name : ListFolderNames(work_.get())) {
        if (::unlinkat(work_.get(), name.c_str(), 0) != 0 &&
            ::unlinkat(work_.get(), name.c_str(), AT_REMOVEDIR) != 0) {
          problems_.push_back(absl::StrCat(plan_.work_name, "/",
                                           VisiblePath(name), " (",
                                           std::strerror(errno), ")"));
        }
      }
      work_ = UniqueFd();
      if (::unlinkat(root_fd_, plan_.work_name.c_str(), AT_REMOVEDIR) != 0 &&
          errno != ENOENT) {
        problems_.push_back(
            absl::StrCat(plan_.work_name, " (", std::strerror(errno), ")"));
      }
    }
  }

  const std::vector<std::string>& problems() const { return problems_; }

 private:
  int root_fd_;
  std::string record_;
  const JournalPlan& plan_;
  std::map<std::string, Sides> sides_;
  UniqueFd work_;
  std::vector<std::string> problems_;
};

}  // namespace

std::vector<std::string> InterruptedApplies(const std::string& undo_folder) {
  std::vector<std::string> ids;
  absl::StatusOr<UniqueFd> folder =
      OpenFile(undo_folder, O_RDONLY | O_DIRECTORY);
  if (!folder.ok()) return ids;
  for (const std::string& name : ListFolderNames(folder->get())) {
    if (::faccessat(folder->get(), JoinPath(name, kJournalName).c_str(), F_OK,
                    AT_SYMLINK_NOFOLLOW) == 0) {
      ids.push_back(name);
    }
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

absl::StatusOr<std::vector<RecoveryResult>> RecoverLocked(
    const std::string& undo_folder, int root_fd, const std::string& project) {
  std::vector<RecoveryResult> results;
  for (const std::string& id : InterruptedApplies(undo_folder)) {
    std::string record = JoinPath(undo_folder, id);
    ASSIGN_OR_RETURN(JournalPlan plan, ReadJournal(record));
    std::map<std::string, Sides> sides;
    std::string list_path = JoinPath(record, "changeset");
    absl::StatusOr<UniqueFd> list = OpenFile(list_path, O_RDONLY | O_NOFOLLOW);
    if (list.ok()) {
      ASSIGN_OR_RETURN(ChangeSet inverse,
                       ReadChangeSet(list->get(), list_path));
      for (const Change& change : inverse.changes) {
        sides[change.entry.path()] = {NewFingerprint(change.entry),
                                      change.entry.base()};
      }
    } else if (!plan.steps.empty()) {
      // The journal is written after the undo record: without one there is
      // nothing to tell old from new.
      return absl::DataLossError(absl::StrCat(
          list_path, ": missing beside the journal of the interrupted apply ",
          id, " in ", project, ": ", list.status().message()));
    }
    RecoveryResult result;
    result.id = id;
    result.finished = plan.committed;
    result.paths = static_cast<int>(sides.size());
    Recovery recovery(root_fd, record, plan, std::move(sides));
    if (!plan.committed) recovery.Reverse();
    recovery.Clean();
    if (!recovery.problems().empty()) {
      return absl::DataLossError(absl::StrCat(
          "recovering the interrupted apply ", id, " in ", project,
          ": could not put back ", absl::StrJoin(recovery.problems(), ", "),
          "; its journal and pre-images stay in ", record,
          "; fix the cause and run garuda-applier recover again"));
    }
    if (plan.committed) {
      ::unlink(JoinPath(record, kJournalName).c_str());
    } else {
      RemoveUndoRecord(record);
    }
    results.push_back(result);
  }
  return results;
}

}  // namespace apply_internal

std::string RecoveryResult::Line() const {
  if (finished) {
    return absl::StrCat("apply ", id,
                        " was interrupted after all its steps; finished: the "
                        "project holds its ",
                        paths, " changed paths");
  }
  return absl::StrCat("apply ", id,
                      " was interrupted; reversed: the project is as before "
                      "it (",
                      paths, " paths put back or never changed)");
}

std::vector<std::string> PendingApplies(const std::string& undo_root,
                                        const std::string& project) {
  absl::StatusOr<std::string> folder = UndoFolder(undo_root, project);
  if (!folder.ok()) return {};
  return apply_internal::InterruptedApplies(*folder);
}

absl::StatusOr<std::vector<RecoveryResult>> RecoverInterruptedApplies(
    const std::string& undo_root, const std::string& project) {
  ASSIGN_OR_RETURN(std::string folder, UndoFolder(undo_root, project));
  if (apply_internal::InterruptedApplies(folder).empty()) {
    return std::vector<RecoveryResult>();
  }
  ASSIGN_OR_RETURN(UniqueFd lock, apply_internal::LockUndoFolder(folder));
  ASSIGN_OR_RETURN(UniqueFd root, OpenRoot(project));
  return apply_internal::RecoverLocked(folder, root.get(), project);
}

}  // namespace garuda
