#include "lib/audit/audit_lockdown.h"

#include "absl/strings/str_cat.h"

namespace garuda {

absl::StatusOr<LockdownReport> LockDownAudit(
    const std::string& accept_weaker_lockdown) {
  LockdownOptions options;
  // The auditor's filter fits: neither program ever starts another.
  options.role = "auditor";
  options.writable_paths = {};  // verify only reads; the store is open
  options.allow_network = false;
  if (!accept_weaker_lockdown.empty()) {
    options.accept_weaker = AcceptWeakerLockdown{accept_weaker_lockdown};
  }
  absl::StatusOr<LockdownReport> report = LockDown(options);
  if (!report.ok()) {
    return absl::Status(
        report.status().code(),
        absl::StrCat("cannot lock down: ", report.status().message(),
                     " (--accept-weaker-lockdown=WHY runs anyway)"));
  }
  return report;
}

}  // namespace garuda
