#include "lib/lockdown/seccomp_golden.h"

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/lockdown/seccomp_filter.h"

namespace garuda {

std::vector<GoldenFilter> AllGoldenFilters() {
  std::vector<GoldenFilter> goldens;
  for (const std::string& role : SeccompRoleNames()) {
    goldens.push_back({role, false, role + ".pfc"});
    goldens.push_back({role, true, role + "_network.pfc"});
  }
  return goldens;
}

absl::StatusOr<std::string> GoldenPfc(const GoldenFilter& golden) {
  ASSIGN_OR_RETURN(SeccompPolicy policy,
                   SeccompPolicyForRole(golden.role, golden.allow_network));
  ASSIGN_OR_RETURN(SeccompFilter filter, SeccompFilter::Build(policy));
  ASSIGN_OR_RETURN(std::string pfc, filter.ExportPfc());
  return absl::StrCat("# policies/seccomp/", golden.role, ".json, network ",
                      golden.allow_network ? "on" : "off",
                      ". Regenerate: bazel run "
                      "//lib/lockdown:export_seccomp_golden -- "
                      "\"$PWD/policies/seccomp/golden\"\n",
                      pfc);
}

}  // namespace garuda
