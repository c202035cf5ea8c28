// garuda-audit: read-only verification of the audit logs, and the reference
// witness.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "lib/audit/verify_cli.h"
#include "lib/base/flags.h"
#include "lib/lockdown/roles.h"

ABSL_FLAG(std::string, project, "",
          "verify: the project whose logs to check (default: the current "
          "folder).");
ABSL_FLAG(bool, all, false, "verify: every project's logs.");
ABSL_FLAG(bool, json, false, "verify: one JSON object per log, for programs.");
ABSL_FLAG(std::string, witness, "",
          "verify: a witness store; each log must agree with its heads.");
ABSL_FLAG(std::string, store, "", "witness: the file that keeps the heads.");
ABSL_FLAG(std::string, accept_weaker_lockdown, "",
          "Run even where the kernel lacks Landlock or seccomp; the reason "
          "given here is reported.");

namespace {

// Tests only: GARUDA_TEST_ONLY_VERIFY_PAUSE_FD=N (see VerifyCliOptions).
int TestPauseFd() {
  const char* value = std::getenv("GARUDA_TEST_ONLY_VERIFY_PAUSE_FD");
  return value == nullptr ? -1 : std::atoi(value);
}

// A lockdown that failed: exit 2, as for input that cannot be read.
int Fail(const char* program, const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n", program,
               std::string(status.message()).c_str());
  return 2;
}

}  // namespace

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
  const garuda::WeakerLockdown weaker{
      absl::GetFlag(FLAGS_accept_weaker_lockdown),
      [mode](const std::string& line) {
        std::fprintf(stderr, "garuda-audit %s: %s\n", mode.c_str(),
                     line.c_str());
      }};
  if (mode == "verify") {
    garuda::VerifyCliOptions options;
    options.project = absl::GetFlag(FLAGS_project);
    options.all = absl::GetFlag(FLAGS_all);
    options.json = absl::GetFlag(FLAGS_json);
    options.witness_file = absl::GetFlag(FLAGS_witness);
    options.pause_fd = TestPauseFd();
    if (options.all && !options.project.empty()) {
      std::fprintf(
          stderr,
          "garuda-audit verify: --project and --all exclude each other\n");
      return 2;
    }
    // Nothing to open first: verify opens each file read-only as it goes.
    if (auto locked = garuda::LockDownAs(garuda::Role::kAudit, {}, weaker);
        !locked.ok()) {
      return Fail("garuda-audit verify", locked.status());
    }
    return garuda::RunVerify(options, stdout, stderr);
  }
  if (mode == "witness") {
    std::optional<garuda::WitnessStore> store = garuda::OpenWitnessStoreOrSay(
        absl::GetFlag(FLAGS_store), stderr);
    if (!store) return 2;
    // The store is open: from here on no file can be written.
    if (auto locked = garuda::LockDownAs(garuda::Role::kAudit, {}, weaker);
        !locked.ok()) {
      return Fail("garuda-audit witness", locked.status());
    }
    return garuda::RunWitness(*store, stderr);
  }
  std::fprintf(stderr,
               "garuda-audit: give one mode, verify or witness (see --help)\n");
  return 2;
}
