#include "lib/lockdown/stager_lockdown.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace garuda {

absl::StatusOr<LockdownReport> LockDownStager(
    const StagerLockdownOptions& options) {
  LockdownOptions lockdown;
  lockdown.role = "stager";
  lockdown.accept_weaker = options.accept_weaker;
  switch (options.process) {
    case StagerProcess::kSandboxBuilder:
      if (!options.writable_paths.empty()) {
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
      if (options.writable_paths.empty()) {
        return absl::InvalidArgumentError(
            "LockDownStager: the staging guard needs the staging root as a "
            "writable path");
      }
      lockdown.writable_paths = options.writable_paths;
      // It starts nothing and talks to nobody: Unix sockets only.
      lockdown.allow_network = false;
      break;
  }
  return LockDown(lockdown);
}

absl::Status TakeStagerLockdown(
    const StagerLockDown& lock_down, const StagerLockdownOptions& options,
    const std::function<void(const std::string&)>& log) {
  if (!lock_down) return absl::OkStatus();
  absl::StatusOr<LockdownReport> report = lock_down(options);
  if (!report.ok()) {
    return absl::Status(report.status().code(),
                        absl::StrCat("lockdown: ", report.status().message()));
  }
  if (options.accept_weaker && !report->weaker.empty() && log) {
    log(absl::StrCat("lockdown weaker (--accept-weaker-lockdown): ",
                     report->weaker));
  }
  return absl::OkStatus();
}

}  // namespace garuda
