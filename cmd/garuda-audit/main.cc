// garuda-audit: read-only verification of the audit logs, and the reference
// witness.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "lib/audit/verify_cli.h"
#include "lib/base/flags.h"

ABSL_FLAG(std::string, project, "",
          "verify: the project whose logs to check (default: the current "
          "folder).");
ABSL_FLAG(bool, all, false, "verify: every project's logs.");
ABSL_FLAG(bool, json, false, "verify: one JSON object per log, for programs.");
ABSL_FLAG(std::string, witness, "",
          "verify: a witness store; each log must agree with its heads.");
ABSL_FLAG(std::string, store, "", "witness: the file that keeps the heads.");

int main(int argc, char** argv) {
  std::vector<std::string> positional = garuda::ParseProgramFlags(
      argc, argv,
      "checks the audit logs under ~/.garuda/audit (read-only), or runs the "
      "reference witness (docs/audit.md).\n\n"
      "  garuda-audit verify [--project DIR | --all] [--json] [--witness "
      "FILE]\n"
      "      one line per log; exit 0 all ok, 1 a failure found, 2 a usage "
      "error or unreadable input\n"
      "  garuda-audit witness --store FILE\n"
      "      reads heads (JSON lines) on standard input, answers one line "
      "each; run it as another user or over ssh");
  garuda::RequireFolderFlag("garuda-audit", "project",
                            absl::GetFlag(FLAGS_project));
  std::string mode = positional.size() == 2 ? positional[1] : "";
  if (mode == "verify") {
    garuda::VerifyCliOptions options;
    options.project = absl::GetFlag(FLAGS_project);
    options.all = absl::GetFlag(FLAGS_all);
    options.json = absl::GetFlag(FLAGS_json);
    options.witness_file = absl::GetFlag(FLAGS_witness);
    if (options.all && !options.project.empty()) {
      std::fprintf(
          stderr,
          "garuda-audit verify: --project and --all exclude each other\n");
      return 2;
    }
    return garuda::RunVerify(options, stdout, stderr);
  }
  if (mode == "witness") {
    return garuda::RunWitness(absl::GetFlag(FLAGS_store), stderr);
  }
  std::fprintf(stderr,
               "garuda-audit: give one mode, verify or witness (see --help)\n");
  return 2;
}
