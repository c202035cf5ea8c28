#include "lib/lockdown/stager_lockdown.h"

#include "absl/status/status.h"

namespace garuda {

absl::Status LockDownStager(const StagerLockdown& what,
                            LockdownReport* report) {
  LockdownOptions lockdown;
  lockdown.role = "stager";
  switch (what.process) {
    case StagerProcess::kSandboxBuilder:
      if (!what.writable_paths.empty()) {
        return absl::InvalidArgumentError(
            "LockDownStager: the sandbox builder has no Landlock, so it "
            "cannot be given writable paths");
      }
      lockdown.without_landlock = WithoutLandlock{
          "it mounts every command's sandbox, and a Landlock domain forbids "
          "mount(2); each command gets Landlock inside its sandbox"};
      // The filter is inherited by each sandbox: its PID 1 brings up
      // loopback over netlink, and a command with the network on opens IP
      // sockets. Whether a command has the network is the sandbox's network
      // namespace and its own filter, not this one.
      lockdown.allow_network = true;
      break;
    case StagerProcess::kStagingGuard:
      if (what.writable_paths.empty()) {
        return absl::InvalidArgumentError(
            "LockDownStager: the staging guard needs the staging root as a "
            "writable path");
      }
      lockdown.writable_paths = what.writable_paths;
      // It starts nothing and talks to nobody: Unix sockets only.
      lockdown.allow_network = false;
      break;
  }
  return TakeRoleLockdown(what, lockdown, report);
}

absl::Status TakeStagerLockdown(
    const StagerLockDown& lock_down, StagerLockdown what,
    const std::optional<AcceptWeakerLockdown>& accept_weaker) {
  if (!lock_down) return absl::OkStatus();
  if (accept_weaker) what.accept_weaker_lockdown = accept_weaker->why;
  return lock_down(what, nullptr);
}

}  // namespace garuda
