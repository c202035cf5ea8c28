#include "lib/apply/outcome.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/apply/apply.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"

namespace garuda {

absl::StatusOr<ApplierPlaces> LocateApplierPlaces(
    const std::string& project, const std::string& undo_root) {
  ApplierPlaces places;
  ASSIGN_OR_RETURN(places.project, RealProjectRoot(project));
  places.undo_root = undo_root;
  if (places.undo_root.empty()) {
    ASSIGN_OR_RETURN(std::string home, HomeDirectory());
    places.undo_root = GarudaUndoRoot(home);
  }
  return places;
}

absl::StatusOr<ChangeSet> ReadChangeSetForProject(int fd,
                                                  const std::string& name,
                                                  const std::string& project) {
  ASSIGN_OR_RETURN(ChangeSet change_set, ReadChangeSet(fd, name));
  const std::string& made_for = change_set.header.project_root();
  // Every list names the project it was made for; one that names none could
  // be for any project, so it is not taken as this one's.
  if (made_for.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        name,
        ": the change list names no project (an empty project_root in "
        "its header), so it cannot be checked to be for ",
        VisiblePath(project)));
  }
  absl::StatusOr<std::string> real = RealProjectRoot(made_for);
  if (!real.ok() || *real != project) {
    return absl::FailedPreconditionError(
        absl::StrCat("the change list was made for ", VisiblePath(made_for),
                     ", not for ", VisiblePath(project), " (use --project)"));
  }
  return change_set;
}

std::string NotDoneLine(const ApplyResult& result, bool undo) {
  std::string what =
      undo ? "The undo was not done" : "The changes were not applied";
  switch (result.outcome) {
    case ApplyOutcome::kApplied:
      return "";
    case ApplyOutcome::kConflict:
      return absl::StrCat(what, ": the project changed since (conflict): ",
                          absl::StrJoin(result.problems, "; "));
    case ApplyOutcome::kRefused:
      return absl::StrCat(what,
                          ": refused: ", absl::StrJoin(result.problems, "; "));
  }
  return "";
}

std::string UndoneLine(const std::string& undo_id) {
  return absl::StrCat("Restored the project as it was before ", undo_id);
}

std::string IgnoredCounts(const ChangeSet& change_set) {
  std::vector<std::string> counts;
  for (const IgnoredCount& count : change_set.summary.ignored()) {
    counts.push_back(absl::StrCat(
        count.folder().empty() ? "(top folder)" : VisiblePath(count.folder()),
        ": ", count.files(), count.files() == 1 ? " file" : " files"));
  }
  return absl::StrJoin(counts, ", ");
}

}  // namespace garuda
