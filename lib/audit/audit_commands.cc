#include "lib/audit/audit_commands.h"

#include "absl/status/status.h"
#include "lib/audit/signing_key.h"
#include "lib/audit/tree_cli.h"
#include "lib/audit/verify_cli.h"
#include "lib/audit/witness_server.h"
#include "lib/audit/witness_submit.h"
#include "lib/lockdown/roles.h"

namespace garuda {
namespace {

constexpr char kProgram[] = "garuda-audit";

struct Invocation {
  const AuditFlags& flags;
  std::string command;  // "prove inclusion"
};

int Fail(const Invocation& call, const absl::Status& status, int code = 2) {
  std::fprintf(stderr, "%s %s: %s\n", kProgram, call.command.c_str(),
               std::string(status.message()).c_str());
  return code;
}

WeakerLockdown Weaker(const Invocation& call) {
  std::string command = call.command;
  return WeakerLockdown{call.flags.accept_weaker_lockdown,
                        [command](const std::string& line) {
                          std::fprintf(stderr, "%s %s: %s\n", kProgram,
                                       command.c_str(), line.c_str());
                        }};
}

// The read-only subcommands: from here on no file can be written (what
// they write is open already), no network, no program.
absl::Status LockDownReadOnly(const Invocation& call) {
  return LockDownAs(Role::kAudit, {}, Weaker(call)).status();
}

int VerifyCommand(const Invocation& call) {
  const AuditFlags& flags = call.flags;
  VerifyCliOptions options;
  options.project = flags.project;
  options.all = flags.all;
  options.json = flags.json;
  options.witness_file = flags.witness;
  options.log_key = flags.log_key;
  options.witness_keys = flags.witness_keys;
  options.pause_fd = flags.verify_pause_fd;
  if (options.all && !options.project.empty()) {
    return Fail(call, absl::InvalidArgumentError(
                          "--project and --all exclude each other"));
  }
  // Nothing to open first: verify opens each file read-only as it goes.
  if (absl::Status locked = LockDownReadOnly(call); !locked.ok()) {
    return Fail(call, locked);
  }
  return RunVerify(options, stdout, stderr);
}

// checkpoint, leaves, prove: read-only, on the project's tree.
template <typename Run>
int OnTree(const Invocation& call, Run run) {
  const std::string& project = call.flags.project;
  absl::StatusOr<std::string> tree =
      ProjectTreeFolder(project.empty() ? "." : project);
  if (!tree.ok()) return Fail(call, tree.status());
  if (absl::Status locked = LockDownReadOnly(call); !locked.ok()) {
    return Fail(call, locked);
  }
  return run(*tree);
}

int CheckpointCommand(const Invocation& call) {
  return OnTree(call, [](const std::string& tree) {
    return RunCheckpoint(tree, stdout, stderr);
  });
}

int LeavesCommand(const Invocation& call) {
  return OnTree(call, [&](const std::string& tree) {
    return RunLeaves(tree, call.flags.size, stdout, stderr);
  });
}

int ProveInclusionCommand(const Invocation& call) {
  const std::optional<uint64_t>&index = call.flags.index,
        &size = call.flags.size;
  if (!index || !size) {
    return Fail(call, absl::InvalidArgumentError(
                          "--index I and --size N are required"));
  }
  return OnTree(call, [&](const std::string& tree) {
    return RunProveInclusion(tree, *index, *size, stdout, stderr);
  });
}

int ProveConsistencyCommand(const Invocation& call) {
  const std::optional<uint64_t>&old = call.flags.old, &size = call.flags.size;
  if (!old || !size) {
    return Fail(
        call, absl::InvalidArgumentError("--old M and --size N are required"));
  }
  return OnTree(call, [&](const std::string& tree) {
    return RunProveConsistency(tree, *old, *size, stdout, stderr);
  });
}

int KeyGenerateCommand(const Invocation& call) {
  const std::string &name = call.flags.name, &out = call.flags.out;
  if (name.empty() || out.empty()) {
    return Fail(call, absl::InvalidArgumentError(
                          "--name NAME and --out FILE are required"));
  }
  absl::StatusOr<UniqueFd> file = CreateSigningKeyFile(out);
  if (!file.ok()) return Fail(call, file.status());
  // The key file is open: from here on no file can be written.
  if (absl::Status locked = LockDownReadOnly(call); !locked.ok()) {
    return Fail(call, locked);
  }
  return RunKeyGenerate(file->get(), name, out, stdout, stderr);
}

int LegacyWitnessCommand(const Invocation& call) {
  std::optional<WitnessStore> store =
      OpenWitnessStoreOrSay(call.flags.store, stderr);
  if (!store) return 2;
  // The store is open: from here on no file can be written.
  if (absl::Status locked = LockDownReadOnly(call); !locked.ok()) {
    return Fail(call, locked);
  }
  return RunWitness(*store, stderr);
}

int WitnessServeCommand(const Invocation& call) {
  WitnessServeOptions options;
  options.listen = call.flags.listen;
  options.port_file = call.flags.port_file;
  options.key_file = call.flags.key;
  options.state_folder = call.flags.state;
  options.log_keys = call.flags.log_keys;
  absl::StatusOr<OpenedWitness> opened = OpenWitness(options);
  if (!opened.ok()) return Fail(call, opened.status());
  // Bound and keyed: from here on it writes only its state folder, connects
  // nowhere, binds nothing more, starts nothing.
  RoleNeeds needs;
  needs.writable_paths = {options.state_folder};
  if (auto locked = LockDownAs(Role::kWitness, needs, Weaker(call));
      !locked.ok()) {
    return Fail(call, locked.status());
  }
  std::fprintf(stderr,
               "%s witness serve: listening on port %d; cosigner key %s\n",
               kProgram, opened->port, opened->witness->CosignerKey().c_str());
  ServeWitnessHttp(opened->listener.get(), *opened->witness, HttpLimits(),
                   /*max_connections=*/64);
  return 0;
}

int WitnessSubmitCommand(const Invocation& call) {
  const std::string &url = call.flags.url, &project = call.flags.project;
  if (url.empty())
    return Fail(call, absl::InvalidArgumentError("--url URL is required"));
  absl::StatusOr<std::string> tree =
      ProjectTreeFolder(project.empty() ? "." : project);
  if (!tree.ok()) return Fail(call, tree.status());
  absl::StatusOr<std::unique_ptr<WitnessSubmit>> submit =
      WitnessSubmit::Prepare(url, *tree);
  if (!submit.ok()) return Fail(call, submit.status());
  // From here on: TCP to the witness's port only, writes only beneath
  // tree/witness, no program started.
  RoleNeeds needs;
  needs.writable_paths = {(*submit)->witness_folder()};
  needs.tcp_connect_ports = {(*submit)->port()};
  if (auto locked = LockDownAs(Role::kWitness, needs, Weaker(call));
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
     VerifyCommand},
    {{"key", "generate"},
     "key generate --name NAME --out FILE\n"
     "      a new Ed25519 note signing key; the verifier key is the last line",
     KeyGenerateCommand},
    {{"checkpoint"},
     "checkpoint [--project DIR]\n      the latest signed checkpoint",
     CheckpointCommand},
    {{"leaves"},
     "leaves [--project DIR] [--size N]\n"
     "      the tree's leaves in order, one log line per line",
     LeavesCommand},
    {{"prove", "inclusion"},
     "prove inclusion [--project DIR] --index I --size N\n"
     "      the inclusion proof, one base64 hash per line",
     ProveInclusionCommand},
    {{"prove", "consistency"},
     "prove consistency [--project DIR] --old M --size N\n"
     "      the consistency proof, one base64 hash per line",
     ProveConsistencyCommand},
    {{"witness", "serve"},
     "witness serve --listen HOST:PORT [--port-file FILE] --key FILE --state "
     "DIR "
     "--log VKEY [--log VKEY ...]\n"
     "      a C2SP tlog-witness: POST /add-checkpoint",
     WitnessServeCommand},
    {{"witness", "submit"},
     "witness submit --url URL [--project DIR]\n"
     "      the latest checkpoint to a witness; its cosignature kept in "
     "tree/witness",
     WitnessSubmitCommand},
    {{"witness"},
     "witness --store FILE\n"
     "      the head witness of checkpointCommand: heads (JSON lines) on "
     "standard input, one answer each",
     LegacyWitnessCommand},
};

}  // namespace

std::string AuditCommandsUsage() {
  std::string usage;
  for (const Subcommand& subcommand : kSubcommands) {
    usage += "\n  garuda-audit ";
    usage += subcommand.usage;
  }
  return usage;
}

int RunAuditCommand(const std::vector<std::string>& words,
                    const AuditFlags& flags) {
  // The row whose words are exactly the positional arguments.
  for (const Subcommand& subcommand : kSubcommands) {
    if (subcommand.words == words) {
      std::string command;
      for (const std::string& word : words) {
        command += command.empty() ? word : " " + word;
      }
      return subcommand.run(Invocation{flags, command});
    }
  }
  std::fprintf(stderr,
               "%s: give a subcommand: verify, key generate, checkpoint, "
               "leaves, prove inclusion, prove consistency, witness serve, "
               "witness submit (see --help)\n",
               kProgram);
  return 2;
}

}  // namespace garuda
