#include "lib/lockdown/roles.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lib/lockdown/lockdown.h"

namespace garuda {
namespace {

// The one message of a lockdown that failed, with the one flag spelling.
absl::Status LockDownNetworkless(const std::string& role,
                                 const RoleLockdownOptions& options) {
  LockdownOptions lockdown;
  lockdown.role = role;
  lockdown.writable_paths = options.writable_paths;
  lockdown.allow_network = false;
  if (!options.accept_weaker_lockdown.empty()) {
    lockdown.accept_weaker =
        AcceptWeakerLockdown{options.accept_weaker_lockdown};
  }
  absl::StatusOr<LockdownReport> report = LockDown(lockdown);
  if (!report.ok()) {
    return absl::Status(
        report.status().code(),
        absl::StrCat("cannot lock down the ", role, ": ",
                     report.status().message(),
                     " (--accept-weaker-lockdown=WHY runs anyway)"));
  }
  if (!report->weaker.empty() && options.log) {
    options.log(absl::StrCat("weaker lockdown: ", report->weaker));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LockDownAuditor(const RoleLockdownOptions& options) {
  return LockDownNetworkless("auditor", options);
}

absl::Status LockDownBudgeter(const RoleLockdownOptions& options) {
  return LockDownNetworkless("budgeter", options);
}

absl::Status NoLockDownGiven(const std::string& program) {
  return absl::InternalError(absl::StrCat(
      program,
      ": no lockdown step was given (options.lock_down): it does not "
      "serve without one"));
}

}  // namespace garuda
