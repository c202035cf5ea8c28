// A job's write scope as the applier holds it (T6): garuda-applier started
// with --job reads the job file itself, and refuses a whole change list any
// of whose paths is outside the scope, whatever a rule or a person said.
// Where a path reaches is the apply's own business: every path is opened
// beneath the project without following a link, at the write itself
// (apply.h), so a path in the scope writes only there.
#ifndef GARUDA_LIB_APPLY_SCOPE_REFUSAL_H_
#define GARUDA_LIB_APPLY_SCOPE_REFUSAL_H_

#include <string>
#include <vector>

#include "lib/changeset/changeset.h"

namespace garuda {

// One problem line per entry of `change_set` outside `scope` (lib/jobs
// InScope), naming its visible path.
void RefuseOutsideScope(const ChangeSet& change_set,
                        const std::vector<std::string>& scope,
                        std::vector<std::string>* problems);

}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_SCOPE_REFUSAL_H_
