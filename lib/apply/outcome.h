// What `garuda-applier apply`/`undo` and `garuda-applier serve` share: where
// the project and the undo store are, the change list checked to be for
// this project, and the outcome lines the model reads.
#ifndef GARUDA_LIB_APPLY_OUTCOME_H_
#define GARUDA_LIB_APPLY_OUTCOME_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/apply/apply.h"
#include "lib/changeset/changeset.h"

namespace garuda {

inline constexpr char kNoChangesLine[] = "No changes";

struct ApplierPlaces {
  std::string project;    // real path
  std::string undo_root;  // ~/.garuda/undo unless given
  // A job's write scope (--job; lib/apply/scope_refusal.h); nullopt: none.
  std::optional<std::vector<std::string>> write_scope;
};

// `project` empty: the current folder; `undo_root` empty: ~/.garuda/undo.
absl::StatusOr<ApplierPlaces> LocateApplierPlaces(const std::string& project,
                                                  const std::string& undo_root);

// Reads a whole change list from `fd` (`name` starts errors) and checks
// that it was made for `project` (a real path).
absl::StatusOr<ChangeSet> ReadChangeSetForProject(int fd,
                                                  const std::string& name,
                                                  const std::string& project);

// The outcome line for the model of an apply (or an undo) that was not
// done: "The changes were not applied: the project changed since
// (conflict): a.txt: ...". Empty for kApplied.
std::string NotDoneLine(const ApplyResult& result, bool undo);

// "Restored the project as it was before ID".
std::string UndoneLine(const std::string& undo_id);

// "build/: 212 files, (top folder): 1 file": what stayed in staging.
std::string IgnoredCounts(const ChangeSet& change_set);

}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_OUTCOME_H_
