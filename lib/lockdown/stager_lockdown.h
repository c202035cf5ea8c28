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

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/lockdown/lockdown.h"

namespace garuda {

enum class StagerProcess {
  kSandboxBuilder,
  kStagingGuard,
};

struct StagerLockdownOptions {
  StagerProcess process = StagerProcess::kSandboxBuilder;
  // kStagingGuard: the only paths it may still write beneath (absolute,
  // existing): the staging root, and the folder of --out.
  std::vector<std::string> writable_paths;
  // --accept-weaker-lockdown WHY: a kernel without seccomp filters (or,
  // for the guard, without Landlock) is accepted, and the report says so.
  std::optional<AcceptWeakerLockdown> accept_weaker;
};

// Irreversible for this process and for what it starts afterwards. Runs
// while the process has one thread, after it has opened what it needs
// (settings, probe, the on_host runner, the staging view and its read-only
// bind of the project).
absl::StatusOr<LockdownReport> LockDownStager(
    const StagerLockdownOptions& options);

// How lib/staging takes the lockdown from cmd/garuda-stager/main.cc
// (LockDownStager there; empty in tests of the library: no lockdown).
using StagerLockDown =
    std::function<absl::StatusOr<LockdownReport>(const StagerLockdownOptions&)>;

// Takes `lock_down` (when set) for `options.process`; a weaker lockdown
// that --accept-weaker-lockdown allowed is said on `log`. An error says
// what failed, prefixed "lockdown: ".
absl::Status TakeStagerLockdown(
    const StagerLockDown& lock_down, const StagerLockdownOptions& options,
    const std::function<void(const std::string&)>& log);

}  // namespace garuda

#endif  // GARUDA_LIB_LOCKDOWN_STAGER_LOCKDOWN_H_
