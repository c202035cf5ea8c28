// The guard of a staged run: the process a person's kill reaches. The
// staging view lives in a child process; the guard waits for it with
// SIGTERM, SIGHUP and SIGINT caught, so that no signal it can catch leaves
// the view's folder behind (with the copy backend, a whole copy of the
// project). A signal the guard cannot catch (SIGKILL) ends the run with it;
// its folder is then removed at the next start for the project, as before.
#ifndef GARUDA_LIB_STAGING_STAGED_GUARD_H_
#define GARUDA_LIB_STAGING_STAGED_GUARD_H_

#include <functional>
#include <optional>
#include <string>

#include <signal.h>
#include <sys/types.h>

#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"
#include "lib/lockdown/roles.h"

namespace garuda {

// What the guard removes after a run that did not end by itself.
struct StagedGuardOptions {
  std::string project;  // real path: its ended one-shot staging folders go
  // A descriptor only the run keeps (serve's channel): closed in the guard,
  // so that the peer sees the end of the channel when the run ends.
  int run_only_fd = -1;
  // Lines for the person (stderr).
  std::function<void(const std::string&)> log;
};

// The guard and its run, in garuda-stager's main.cc's steps: Fork returns
// in both processes. The run's goes on opening what it needs (is_guard()
// false: nothing more to do with this object). The guard's is locked down
// by main.cc as Role::kStagingGuard with Needs() (the staging root; found
// before the fork), then Wait()s; or, when that lockdown fails, Refuse()s.
class StagedGuard {
 public:
  // An error (said on `log`, with "nothing was run"): no run was started,
  // and the signal mask is as it was.
  static absl::StatusOr<StagedGuard> Fork(const StagedGuardOptions& options);

  bool is_guard() const { return child_ > 0; }
  RoleNeeds Needs() const;

  // Waits for the run and returns its exit code. A caught signal instead:
  // the run and every process below it are killed and waited for (none can
  // write into the folder any more), the project's ended one-shot staging
  // folders are removed, and the guard ends by the same signal. A run that
  // dies of a signal itself gets the same cleanup, and 125. A signal
  // ignored when the guard starts (nohup's SIGHUP) stays ignored.
  int Wait();
  // The guard's lockdown failed: the run is stopped, nothing is left
  // behind; 125.
  int Refuse(const absl::Status& why);

 private:
  StagedGuard() = default;
  StagedGuardOptions options_;
  std::string root_;  // the staging root; empty: none could be made
  pid_t child_ = 0;
  sigset_t previous_mask_;
  UniqueFd signals_, request_read_, answer_write_;
};

// For the run, in the guard's child: asks the guard, right before the run
// writes its list (stdout or --out), whether it may. False when the guard
// has caught a stop signal (it is ending the run; nothing may be written,
// since the person stopped it) or is gone. True outside a guarded run.
bool OutputPermitted();

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_STAGED_GUARD_H_
