#include "lib/apply/job_applier.h"

#include "lib/base/status_macros.h"
#include "lib/jobs/job_guard.h"

namespace garuda {

absl::Status OpenApplierJob(const std::string& job_file, ApplierPlaces* places,
                            ConsentOptions* consent) {
  ASSIGN_OR_RETURN(jobs::JobGuard job,
                   jobs::LoadJobGuard(job_file, places->project));
  if (!job.whole_worktree) places->write_scope = job.scope;
  consent->extra_rules = job.permissions;
  consent->extra_rules_source = job.file;
  return absl::OkStatus();
}

}  // namespace garuda
