// `garuda-stager run --mode staged` in the child of its staging guard
// (lib/staging/staged_guard.h), in two steps around garuda-stager's
// main.cc's lockdown.
#ifndef GARUDA_LIB_STAGING_STAGED_RUN_H_
#define GARUDA_LIB_STAGING_STAGED_RUN_H_

#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/policy/merge.h"
#include "lib/staging/session.h"

namespace garuda {
namespace netproxy {
class SessionProxy;
}  // namespace netproxy

// `garuda-stager run --mode staged`, in the child of its guard
// (lib/staging/staged_guard.h: SIGTERM, SIGHUP or SIGINT end the run with
// its one-shot staging folder removed, and nothing listed), in main.cc's
// steps: Open makes the view, enters it (the project bound read-only) and
// starts the allow list's proxy; main.cc locks down (Role::kStager); Run
// runs the command. Its exit code (128 + signal, 124 timed out), or 125
// when nothing was run. The ChangeSet goes to `out`, else to stdout when it
// is not a terminal; on a terminal the summary and the diff are printed.
class StagedRun {
 public:
  // An error has been said (with what runs instead: nothing).
  static absl::StatusOr<std::unique_ptr<StagedRun>> Open(
      MergedSettings settings, const StagedRunRequest& request);
  ~StagedRun();
  int Run();
  // The lockdown failed: said, nothing run; 125.
  int Refuse(const absl::Status& why);

 private:
  StagedRun(MergedSettings settings, const StagedRunRequest& request);
  absl::Status Stopped(const absl::Status& why);

  MergedSettings settings_;
  StagedRunRequest request_;
  StagingTimings timings_;
  std::unique_ptr<StagedView> view_;
  std::unique_ptr<netproxy::SessionProxy> proxy_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_STAGED_RUN_H_
