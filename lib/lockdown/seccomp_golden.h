// The golden files of policies/seccomp/golden/: which filters they hold and
// how each is produced, shared by the test that checks them and the tool
// that rewrites them.
#ifndef GARUDA_LIB_LOCKDOWN_SECCOMP_GOLDEN_H_
#define GARUDA_LIB_LOCKDOWN_SECCOMP_GOLDEN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace garuda {

struct GoldenFilter {
  std::string role;
  bool allow_network = false;
  std::string file_name;  // "<role>.pfc" or "<role>_network.pfc"
};

// Every role, without and with the network.
std::vector<GoldenFilter> AllGoldenFilters();

// seccomp_export_pfc of the filter, after a header line naming the policy.
absl::StatusOr<std::string> GoldenPfc(const GoldenFilter& golden);

}  // namespace garuda

#endif  // GARUDA_LIB_LOCKDOWN_SECCOMP_GOLDEN_H_
