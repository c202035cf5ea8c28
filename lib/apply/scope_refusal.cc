#include "lib/apply/scope_refusal.h"

#include "absl/strings/str_cat.h"
#include "lib/base/visible.h"
#include "lib/jobs/scope.h"

namespace garuda {

void RefuseOutsideScope(const ChangeSet& change_set,
                        const std::vector<std::string>& scope,
                        std::vector<std::string>* problems) {
  for (const auto& change : change_set.changes) {
    const std::string& path = change.entry.path();
    if (jobs::InScope(scope, path)) continue;
    problems->push_back(absl::StrCat(
        VisiblePath(path),
        ": outside the job's write scope (writeScope); a job's applier "
        "writes nothing else"));
  }
}

}  // namespace garuda
