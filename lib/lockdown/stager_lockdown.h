// garuda-stager's lockdown. A staged run has two kinds of process, and
// each takes what its work allows:
//
//   the sandbox builder (serve, run): makes namespaces and mounts for every
//     command, so it keeps them; no_new_privs and the "stager" seccomp role,
//     no Landlock (a Landlock domain forbids mount(2) to the process and to
//     every sandbox it starts afterwards);
//   the staging guard (StagedRunGuard, lib/staging/staged_guard.h): only
//     waits and removes staging folders, so Landlock confines its writes to
//     the staging root on top of the same seccomp role.
//
// The commands get their own, stricter confinement inside the sandbox
// (sandbox/), on top of the filter they inherit from the stager.
#ifndef GARUDA_LIB_LOCKDOWN_STAGER_LOCKDOWN_H_
#define GARUDA_LIB_LOCKDOWN_STAGER_LOCKDOWN_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/lockdown/lockdown.h"
#include "lib/lockdown/roles.h"

namespace garuda {

enum class StagerProcess {
  kSandboxBuilder,
  kStagingGuard,
};

struct StagerLockdown : RoleLockdown {
  StagerProcess process = StagerProcess::kSandboxBuilder;
  // kStagingGuard: the only paths it may still write beneath (absolute,
  // existing): the staging root, and the folder of --out.
  std::vector<std::string> writable_paths;
};

// Irreversible for this process and for what it starts afterwards. Runs
// while the process has one thread, after it has opened what it needs
// (settings, probe, the on_host runner, the staging view and its read-only
// bind of the project). With --accept-weaker-lockdown WHY a kernel without
// seccomp filters (or, for the guard, without Landlock) is accepted, and the
// report says so.
absl::Status LockDownStager(const StagerLockdown& what, LockdownReport* report);

// How lib/staging takes the lockdown from cmd/garuda-stager/main.cc
// (LockDownStager there; empty in tests of the library: no lockdown).
using StagerLockDown = LockDownStep<StagerLockdown>;

// Takes `lock_down` (when set) for `what`; the reason of a weaker one is
// `accept_weaker`'s. An error says what failed.
absl::Status TakeStagerLockdown(
    const StagerLockDown& lock_down, StagerLockdown what,
    const std::optional<AcceptWeakerLockdown>& accept_weaker);

}  // namespace garuda

#endif  // GARUDA_LIB_LOCKDOWN_STAGER_LOCKDOWN_H_
