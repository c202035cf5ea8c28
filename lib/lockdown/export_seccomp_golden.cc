// Writes the golden files of policies/seccomp/golden/: seccomp_export_pfc of
// every compiled-in role, without and with the network.
//   bazel run //lib/lockdown:export_seccomp_golden --
//   "$PWD/policies/seccomp/golden"
#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "lib/base/files.h"
#include "lib/lockdown/seccomp_filter.h"
#include "lib/lockdown/seccomp_golden.h"

int main(int argc, char** argv) {
  if (argc != 2 || std::string(argv[1]) == "--help") {
    std::fprintf(stderr,
                 "usage: export_seccomp_golden FOLDER\n"
                 "Writes <role>.pfc and <role>_network.pfc for every seccomp "
                 "role into FOLDER.\n");
    return 2;
  }
  for (const garuda::GoldenFilter& golden : garuda::AllGoldenFilters()) {
    absl::StatusOr<std::string> pfc = garuda::GoldenPfc(golden);
    absl::Status status = pfc.status();
    if (status.ok()) {
      status = garuda::WriteFileAtomically(
          garuda::JoinPath(argv[1], golden.file_name), *pfc, 0644);
    }
    if (!status.ok()) {
      std::fprintf(stderr, "%s: %s\n", golden.file_name.c_str(),
                   status.ToString().c_str());
      return 1;
    }
    std::printf("wrote %s\n", golden.file_name.c_str());
  }
  return 0;
}
