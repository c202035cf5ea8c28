#include "lib/apply/applier_lockdown.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "lib/lockdown/lockdown.h"

namespace garuda {

absl::Status LockDownApplier(const std::vector<std::string>& writable,
                             const ApplierLockdownOptions& applier) {
  LockdownOptions options;
  options.role = "applier";
  options.writable_paths = writable;
  options.allow_network = false;
  if (!applier.accept_weaker_why.empty()) {
    options.accept_weaker = AcceptWeakerLockdown{applier.accept_weaker_why};
  }
  absl::StatusOr<LockdownReport> report = LockDown(options);
  if (!report.ok()) {
    return absl::Status(
        report.status().code(),
        absl::StrCat("cannot lock down: ", report.status().message(),
                     " (--accept-weaker-lockdown=WHY runs anyway)"));
  }
  if (!report->weaker.empty()) {
    std::fprintf(stderr, "garuda-applier: weaker lockdown: %s\n",
                 report->weaker.c_str());
  }
  return absl::OkStatus();
}

}  // namespace garuda
