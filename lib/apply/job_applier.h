// garuda-applier --job FILE (T6): the applier of a job reads the job file
// itself, against the project it serves (the job's worktree).
#ifndef GARUDA_LIB_APPLY_JOB_APPLIER_H_
#define GARUDA_LIB_APPLY_JOB_APPLIER_H_

#include <string>

#include "absl/status/status.h"
#include "lib/apply/outcome.h"
#include "lib/consent/consent.h"

namespace garuda {

// Keeps the job's scope in `places` (none for a job without writeScope:
// the whole worktree) and its rules in `consent`. An unreadable job file or
// a scope entry refused against the worktree is the error, naming the file.
absl::Status OpenApplierJob(const std::string& job_file, ApplierPlaces* places,
                            ConsentOptions* consent);

}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_JOB_APPLIER_H_
