#include "lib/apply/applier_lockdown.h"

#include "absl/strings/str_cat.h"
#include "lib/lockdown/lockdown.h"

namespace garuda {

absl::Status LockDownApplier(const std::vector<std::string>& writable) {
  LockdownOptions options;
  options.role = "applier";
  options.writable_paths = writable;
  options.allow_network = false;
  absl::StatusOr<LockdownReport> report = LockDown(options);
  if (!report.ok()) {
    return absl::Status(report.status().code(),
                        absl::StrCat("lockdown: ", report.status().message()));
  }
  return absl::OkStatus();
}

}  // namespace garuda
