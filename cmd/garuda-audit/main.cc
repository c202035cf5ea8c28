// garuda-audit: reads the audit logs and their Merkle tree (verify,
// checkpoint, leaves, prove), makes signing keys, and runs or calls a C2SP
// witness. The flags go into AuditFlags; the subcommand's row in
// lib/audit/audit_commands.cc opens what it needs, locks down and runs
// (docs/audit.md).
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "lib/audit/audit_commands.h"
#include "lib/audit/tree_cli.h"
#include "lib/base/flags.h"

ABSL_FLAG(std::string, project, "",
          "The project whose logs and tree to read (default: the current "
          "folder).");
ABSL_FLAG(bool, all, false, "verify: every project's logs.");
ABSL_FLAG(bool, json, false, "verify: one JSON object per log, for programs.");
ABSL_FLAG(std::string, witness, "",
          "verify: a witness store of `witness --store`; each log must agree "
          "with its heads.");
ABSL_FLAG(std::string, log_key, "",
          "verify: the log's verifier key (<name>+<id>+<base64>); default: "
          "tree/key beside the logs.");
ABSL_FLAG(std::string, witness_key, "",
          "verify: a witness's cosigner key; its cosignature must be there "
          "and agree with the tree. May be given more than once.");
ABSL_FLAG(std::string, store, "", "witness: the file that keeps the heads.");
ABSL_FLAG(std::string, name, "", "key generate: the key's name.");
ABSL_FLAG(std::string, out, "", "key generate: the new key file (0600).");
ABSL_FLAG(int64_t, size, -1, "leaves, prove: the tree size.");
ABSL_FLAG(int64_t, index, -1, "prove inclusion: the leaf's index (0-based).");
ABSL_FLAG(int64_t, old, -1, "prove consistency: the older tree size.");
ABSL_FLAG(std::string, listen, "",
          "witness serve: HOST:PORT to listen on (a numeric address; port 0 "
          "picks one).");
ABSL_FLAG(std::string, port_file, "",
          "witness serve: write the port listened on to this file.");
ABSL_FLAG(std::string, key, "", "witness serve: the witness's signing key.");
ABSL_FLAG(std::string, state, "",
          "witness serve: the folder of the checkpoints it cosigned.");
ABSL_FLAG(std::string, log, "",
          "witness serve: a log's verifier key; may be given more than once.");
ABSL_FLAG(std::string, url, "",
          "witness submit: the witness's URL (its submission prefix).");
ABSL_FLAG(std::string, accept_weaker_lockdown, "",
          "Run even where the kernel lacks Landlock or seccomp; the reason "
          "given here is reported.");

namespace {

std::optional<uint64_t> SizeFlag(const absl::Flag<int64_t>& flag) {
  int64_t value = absl::GetFlag(flag);
  if (value < 0) return std::nullopt;
  return static_cast<uint64_t>(value);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional = garuda::ParseProgramFlags(
      argc, argv,
      "reads the audit logs under ~/.garuda/audit and their Merkle tree, "
      "makes signing keys, runs or calls a witness (docs/audit.md).\n" +
          garuda::AuditCommandsUsage());
  garuda::AuditFlags flags;
  flags.project = absl::GetFlag(FLAGS_project);
  garuda::RequireFolderFlag("garuda-audit", "project", flags.project);
  flags.all = absl::GetFlag(FLAGS_all);
  flags.json = absl::GetFlag(FLAGS_json);
  flags.witness = absl::GetFlag(FLAGS_witness);
  flags.log_key = absl::GetFlag(FLAGS_log_key);
  flags.witness_keys = garuda::RepeatedFlagValues(argc, argv, "witness-key");
  flags.store = absl::GetFlag(FLAGS_store);
  flags.name = absl::GetFlag(FLAGS_name);
  flags.out = absl::GetFlag(FLAGS_out);
  flags.size = SizeFlag(FLAGS_size);
  flags.index = SizeFlag(FLAGS_index);
  flags.old = SizeFlag(FLAGS_old);
  flags.listen = absl::GetFlag(FLAGS_listen);
  flags.port_file = absl::GetFlag(FLAGS_port_file);
  flags.key = absl::GetFlag(FLAGS_key);
  flags.state = absl::GetFlag(FLAGS_state);
  flags.log_keys = garuda::RepeatedFlagValues(argc, argv, "log");
  flags.url = absl::GetFlag(FLAGS_url);
  flags.accept_weaker_lockdown = absl::GetFlag(FLAGS_accept_weaker_lockdown);
  // Tests only: GARUDA_TEST_ONLY_VERIFY_PAUSE_FD=N (see VerifyCliOptions).
  if (const char* pause = std::getenv("GARUDA_TEST_ONLY_VERIFY_PAUSE_FD")) {
    flags.verify_pause_fd = std::atoi(pause);
  }
  return garuda::RunAuditCommand(
      std::vector<std::string>(positional.begin() + 1, positional.end()),
      flags);
}
