// garuda-audit: reads the audit logs and their Merkle tree (verify,
// checkpoint, leaves, prove), makes signing keys, and runs or calls a C2SP
// witness. One row per subcommand; each reads its flags, opens what it
// needs, locks down, and hands over to lib/audit (docs/audit.md).
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "lib/audit/signing_key.h"
#include "lib/audit/tree_cli.h"
#include "lib/audit/verify_cli.h"
#include "lib/audit/witness_server.h"
#include "lib/audit/witness_submit.h"
#include "lib/base/flags.h"
#include "lib/lockdown/roles.h"

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

constexpr char kProgram[] = "garuda-audit";

struct Invocation {
  int argc;
  char** argv;
  std::string command;  // "prove inclusion"
};

// Tests only: GARUDA_TEST_ONLY_VERIFY_PAUSE_FD=N (see VerifyCliOptions).
int TestPauseFd() {
  const char* value = std::getenv("GARUDA_TEST_ONLY_VERIFY_PAUSE_FD");
  return value == nullptr ? -1 : std::atoi(value);
}

int Fail(const Invocation& call, const absl::Status& status, int code = 2) {
  std::fprintf(stderr, "%s %s: %s\n", kProgram, call.command.c_str(),
               std::string(status.message()).c_str());
  return code;
}

garuda::WeakerLockdown Weaker(const Invocation& call) {
  std::string command = call.command;
  return garuda::WeakerLockdown{
      absl::GetFlag(FLAGS_accept_weaker_lockdown),
      [command](const std::string& line) {
        std::fprintf(stderr, "%s %s: %s\n", kProgram, command.c_str(),
                     line.c_str());
      }};
}

// The read-only subcommands: from here on no file can be written (what
// they write is open already), no network, no program.
absl::Status LockDownReadOnly(const Invocation& call) {
  return garuda::LockDownAs(garuda::Role::kAudit, {}, Weaker(call)).status();
}

std::optional<uint64_t> SizeFlag(absl::Flag<int64_t>& flag) {
  int64_t value = absl::GetFlag(flag);
  if (value < 0) return std::nullopt;
  return static_cast<uint64_t>(value);
}

int Verify(const Invocation& call) {
  garuda::VerifyCliOptions options;
  options.project = absl::GetFlag(FLAGS_project);
  options.all = absl::GetFlag(FLAGS_all);
  options.json = absl::GetFlag(FLAGS_json);
  options.witness_file = absl::GetFlag(FLAGS_witness);
  options.log_key = absl::GetFlag(FLAGS_log_key);
  options.witness_keys =
      garuda::RepeatedFlagValues(call.argc, call.argv, "witness-key");
  options.pause_fd = TestPauseFd();
  if (options.all && !options.project.empty()) {
    return Fail(call, absl::InvalidArgumentError(
                          "--project and --all exclude each other"));
  }
  // Nothing to open first: verify opens each file read-only as it goes.
  if (absl::Status locked =
          LockDownReadOnly(call);
      !locked.ok()) {
    return Fail(call, locked);
  }
  return garuda::RunVerify(options, stdout, stderr);
}

// checkpoint, leaves, prove: read-only, on the project's tree.
template <typename Run>
int OnTree(const Invocation& call, Run run) {
  std::string project = absl::GetFlag(FLAGS_project);
  absl::StatusOr<std::string> tree =
      garuda::ProjectTreeFolder(project.empty() ? "." : project);
  if (!tree.ok()) return Fail(call, tree.status());
  if (absl::Status locked =
          LockDownReadOnly(call);
      !locked.ok()) {
    return Fail(call, locked);
  }
  return run(*tree);
}

int Checkpoint(const Invocation& call) {
  return OnTree(call, [](const std::string& tree) {
    return garuda::RunCheckpoint(tree, stdout, stderr);
  });
}

int Leaves(const Invocation& call) {
  return OnTree(call, [](const std::string& tree) {
    return garuda::RunLeaves(tree, SizeFlag(FLAGS_size), stdout, stderr);
  });
}

int ProveInclusion(const Invocation& call) {
  std::optional<uint64_t> index = SizeFlag(FLAGS_index),
                          size = SizeFlag(FLAGS_size);
  if (!index || !size) {
    return Fail(call, absl::InvalidArgumentError(
                          "--index I and --size N are required"));
  }
  return OnTree(call, [&](const std::string& tree) {
    return garuda::RunProveInclusion(tree, *index, *size, stdout, stderr);
  });
}

int ProveConsistency(const Invocation& call) {
  std::optional<uint64_t> old = SizeFlag(FLAGS_old),
                          size = SizeFlag(FLAGS_size);
  if (!old || !size) {
    return Fail(
        call, absl::InvalidArgumentError("--old M and --size N are required"));
  }
  return OnTree(call, [&](const std::string& tree) {
    return garuda::RunProveConsistency(tree, *old, *size, stdout, stderr);
  });
}

int KeyGenerate(const Invocation& call) {
  std::string name = absl::GetFlag(FLAGS_name), out = absl::GetFlag(FLAGS_out);
  if (name.empty() || out.empty()) {
    return Fail(call, absl::InvalidArgumentError(
                          "--name NAME and --out FILE are required"));
  }
  absl::StatusOr<garuda::UniqueFd> file = garuda::CreateSigningKeyFile(out);
  if (!file.ok()) return Fail(call, file.status());
  // The key file is open: from here on no file can be written.
  if (absl::Status locked =
          LockDownReadOnly(call);
      !locked.ok()) {
    return Fail(call, locked);
  }
  return garuda::RunKeyGenerate(file->get(), name, out, stdout, stderr);
}

int LegacyWitness(const Invocation& call) {
  std::optional<garuda::WitnessStore> store =
      garuda::OpenWitnessStoreOrSay(absl::GetFlag(FLAGS_store), stderr);
  if (!store) return 2;
  // The store is open: from here on no file can be written.
  if (absl::Status locked =
          LockDownReadOnly(call);
      !locked.ok()) {
    return Fail(call, locked);
  }
  return garuda::RunWitness(*store, stderr);
}

int WitnessServe(const Invocation& call) {
  garuda::WitnessServeOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.port_file = absl::GetFlag(FLAGS_port_file);
  options.key_file = absl::GetFlag(FLAGS_key);
  options.state_folder = absl::GetFlag(FLAGS_state);
  options.log_keys = garuda::RepeatedFlagValues(call.argc, call.argv, "log");
  absl::StatusOr<garuda::OpenedWitness> opened = garuda::OpenWitness(options);
  if (!opened.ok()) return Fail(call, opened.status());
  // Bound and keyed: from here on it writes only its state folder, connects
  // nowhere, binds nothing more, starts nothing.
  garuda::RoleNeeds needs;
  needs.writable_paths = {options.state_folder};
  if (auto locked = garuda::LockDownAs(garuda::Role::kWitness, needs, Weaker(call));
      !locked.ok()) {
    return Fail(call, locked.status());
  }
  std::fprintf(stderr,
               "%s witness serve: listening on port %d; cosigner key %s\n",
               kProgram, opened->port, opened->witness->CosignerKey().c_str());
  garuda::ServeWitnessHttp(opened->listener.get(), *opened->witness,
                           garuda::HttpLimits(), /*max_connections=*/64);
  return 0;
}

int WitnessSubmit(const Invocation& call) {
  std::string url = absl::GetFlag(FLAGS_url),
              project = absl::GetFlag(FLAGS_project);
  if (url.empty())
    return Fail(call, absl::InvalidArgumentError("--url URL is required"));
  absl::StatusOr<std::string> tree =
      garuda::ProjectTreeFolder(project.empty() ? "." : project);
  if (!tree.ok()) return Fail(call, tree.status());
  absl::StatusOr<std::unique_ptr<garuda::WitnessSubmit>> submit =
      garuda::WitnessSubmit::Prepare(url, *tree);
  if (!submit.ok()) return Fail(call, submit.status());
  // From here on: TCP to the witness's port only, writes only beneath
  // tree/witness, no program started.
  garuda::RoleNeeds needs;
  needs.writable_paths = {(*submit)->witness_folder()};
  needs.tcp_connect_ports = {(*submit)->port()};
  if (auto locked = garuda::LockDownAs(garuda::Role::kWitness, needs, Weaker(call));
      !locked.ok()) {
    return Fail(call, locked.status());
  }
  return (*submit)->Run(stdout, stderr);
}

struct Subcommand {
  std::vector<std::string> words;
  const char* usage;
  int (*run)(const Invocation&);
};

const Subcommand kSubcommands[] = {
    {{"verify"},
     "verify [--project DIR | --all] [--json] [--witness FILE] [--log-key "
     "VKEY] "
     "[--witness-key VKEY ...]\n"
     "      the logs, the tree and its signed checkpoints; exit 0 all ok, 1 a "
     "failure found, 2 a usage error or unreadable input",
     Verify},
    {{"key", "generate"},
     "key generate --name NAME --out FILE\n"
     "      a new Ed25519 note signing key; the verifier key is the last line",
     KeyGenerate},
    {{"checkpoint"},
     "checkpoint [--project DIR]\n      the latest signed checkpoint",
     Checkpoint},
    {{"leaves"},
     "leaves [--project DIR] [--size N]\n"
     "      the tree's leaves in order, one log line per line",
     Leaves},
    {{"prove", "inclusion"},
     "prove inclusion [--project DIR] --index I --size N\n"
     "      the inclusion proof, one base64 hash per line",
     ProveInclusion},
    {{"prove", "consistency"},
     "prove consistency [--project DIR] --old M --size N\n"
     "      the consistency proof, one base64 hash per line",
     ProveConsistency},
    {{"witness", "serve"},
     "witness serve --listen HOST:PORT [--port-file FILE] --key FILE --state "
     "DIR "
     "--log VKEY [--log VKEY ...]\n"
     "      a C2SP tlog-witness: POST /add-checkpoint",
     WitnessServe},
    {{"witness", "submit"},
     "witness submit --url URL [--project DIR]\n"
     "      the latest checkpoint to a witness; its cosignature kept in "
     "tree/witness",
     WitnessSubmit},
    {{"witness"},
     "witness --store FILE\n"
     "      the head witness of checkpointCommand: heads (JSON lines) on "
     "standard input, one answer each",
     LegacyWitness},
};

std::string Usage() {
  std::string usage =
      "reads the audit logs under ~/.garuda/audit and their Merkle tree, "
      "makes signing keys, runs or calls a witness (docs/audit.md).\n";
  for (const Subcommand& subcommand : kSubcommands) {
    usage += "\n  garuda-audit ";
    usage += subcommand.usage;
  }
  return usage;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional =
      garuda::ParseProgramFlags(argc, argv, Usage());
  garuda::RequireFolderFlag(kProgram, "project", absl::GetFlag(FLAGS_project));
  std::vector<std::string> words(positional.begin() + 1, positional.end());
  // The longest row whose words are exactly the positional arguments.
  for (const Subcommand& subcommand : kSubcommands) {
    if (subcommand.words == words) {
      std::string command;
      for (const std::string& word : words) {
        command += command.empty() ? word : " " + word;
      }
      return subcommand.run(Invocation{argc, argv, command});
    }
  }
  std::fprintf(stderr,
               "%s: give a subcommand: verify, key generate, checkpoint, "
               "leaves, prove inclusion, prove consistency, witness serve, "
               "witness submit (see --help)\n",
               kProgram);
  return 2;
}
