// The apply as one transaction (lib/apply internal): apply.cc holds the
// checks against the project and the plan, transaction.cc the journal, the
// temporaries, the confirmed renames and the way back.
#ifndef GARUDA_LIB_APPLY_TRANSACTION_H_
#define GARUDA_LIB_APPLY_TRANSACTION_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/apply/apply.h"
#include "lib/apply/journal.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/changeset.h"

namespace garuda {
namespace apply_internal {

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
inline constexpr char kChangedDuringApply[] =
    "changed in the project during the apply";

// The project's folders, opened beneath its root (no link on the way).
// Folders opened once are kept open: 10 000 files in 100 folders need 100
// opens, not 70 000. An fd follows its folder, so a folder moved aside is
// forgotten at once (Forget), with everything beneath it; steps keep their
// own reference.
class ProjectFolders {
 public:
  void set_root(UniqueFd root) { root_ = std::move(root); }
  int root() const { return root_.get(); }

  // A new descriptor of the folder `path` (not kept).
  absl::StatusOr<UniqueFd> Open(const std::string& path) const;
  absl::StatusOr<Held> Cached(const std::string& path);
  void Forget(const std::string& path);
  void Clear() { cached_.clear(); }

  // FingerprintAt through the cache: a missing parent, or one that is not
  // a folder, means absent; a symlinked one is FAILED_PRECONDITION.
  absl::StatusOr<Fingerprint> FingerprintOf(const std::string& path,
                                            std::string* content = nullptr);

 private:
  UniqueFd root_;
  std::map<std::string, Held> cached_;
};

class Applier {
 public:
  Applier(const ChangeSet& change_set, const ApplyOptions& options)
      : change_set_(change_set), options_(options) {}

  absl::StatusOr<ApplyResult> Run();

 private:
  // Refusals that need the project, and the conflict check.
  absl::Status CheckProject(ApplyResult* result);

  // True when a folder above `path` is, in the project, something the list
  // replaces (a symlink or a file that becomes a folder).
  bool UnderReplacedPath(const std::string& path) const;

  // Every step decided before the project is touched, so that the journal
  // can hold them all: the temporaries' names and folders, removals deepest
  // first, then folders and new paths shallowest first.
  absl::Status Plan();

  void Add(StepKind kind, const ChangeEntry* entry, std::string temp,
           bool in_work, uint32_t mode = 0, uint32_t old_mode = 0,
           const std::string& path = "");

  // Missing folders above `path` (0755), made before it.
  absl::Status PlanParents(const std::string& path,
                           std::set<std::string>* made);

  // The plan, the journal, then the work folder and every new content in a
  // temporary, synced before the first rename.
  absl::Status Prepare();

  // Writes the new content of `change` to a synced temporary file (or makes
  // the temporary link) in `folder`, named `name`.
  absl::Status WriteTemporary(const Change& change, int folder,
                              const std::string& name);

  absl::Status Execute();

  absl::Status Changed(const Step& step);

  // One step; it counts as done (and is put back on failure) only when the
  // call succeeded.
  absl::Status RunStep(Step& step);

  // What a rename swapped out or moved aside must be what the check saw:
  // a save in between would otherwise be lost (and the undo record would
  // hold the older content). A new folder gets its mode.
  absl::Status ConfirmStep(Step& step);

  // A list this small is synced file by file and folder by folder.
  bool SyncEach() const { return change_set_.changes.size() <= kSyncEachLimit; }
  static constexpr size_t kSyncEachLimit = 32;

  // The apply failed or was interrupted: put back, clean up, and say what
  // the project holds now.
  absl::StatusOr<ApplyResult> Abandon(const absl::Status& status,
                                      ApplyResult* result);

  // Undoes the steps done, newest first, through the folders they hold.
  absl::Status RollBack();

  // Removes every temporary and the work folder, through the folders held
  // open; returns what could not be removed.
  std::vector<std::string> RemoveTemporaries();

  // The apply is done: what was moved aside or swapped out goes away, then
  // the journal (from here on there is nothing to recover).
  void Commit();

  const ChangeSet& change_set_;
  const ApplyOptions& options_;
  ProjectFolders folders_;
  // The steps RollBack could not undo, for a person.
  std::vector<std::string> not_put_back_;
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
  std::map<std::string, std::string> base_contents_;  // pre-images for undo
};

}  // namespace apply_internal
}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_TRANSACTION_H_
