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

#include "lib/lockdown/roles.h"

namespace garuda {

// What the guard removes after a run that did not end by itself, and how
// it confines itself meanwhile.
struct StagedGuardOptions {
  std::string project;  // real path: its ended one-shot staging folders go
  // A descriptor only the run keeps (serve's channel): closed in the guard,
  // so that the peer sees the end of the channel when the run ends.
  int run_only_fd = -1;
  // main.cc's LockDownAs(Role::kStagingGuard), taken by the guard once the
  // run has started, with the staging root as its one writable path; empty
  // or failing: the run is stopped and nothing is left behind.
  LockDownCall lock_down;
  // Lines for the person (stderr).
  std::function<void(const std::string&)> log;
};

// Runs `run` in a child process (its return value is the child's exit
// code) and returns that code. A caught signal instead: the run and every
// process below it are killed and waited for (none can write into the
// folder any more), the project's ended one-shot staging folders are
// removed, and the guard ends by the same signal. A run
// that dies of a signal itself gets the same cleanup, and 125. A signal
// ignored when the guard starts (nohup's SIGHUP) stays ignored.
int RunStagedGuarded(const StagedGuardOptions& options,
                     const std::function<int()>& run);

// For the run, in the guard's child: asks the guard, right before the run
// writes its list (stdout or --out), whether it may. False when the guard
// has caught a stop signal (it is ending the run; nothing may be written,
// since the person stopped it) or is gone. True outside a guarded run.
bool OutputPermitted();

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_STAGED_GUARD_H_
