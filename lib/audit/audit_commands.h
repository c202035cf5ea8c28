// garuda-audit's subcommands (docs/audit.md): one table row per
// subcommand; each checks its flags, opens what it needs, locks down, and
// runs. cmd/garuda-audit/main.cc only parses the flags into AuditFlags.
#ifndef GARUDA_LIB_AUDIT_AUDIT_COMMANDS_H_
#define GARUDA_LIB_AUDIT_AUDIT_COMMANDS_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace garuda {

// The flags of every subcommand; each reads the ones it names in its usage.
struct AuditFlags {
  std::string project;  // empty: the current folder
  bool all = false;
  bool json = false;
  std::string witness;  // verify --witness FILE (the head witness's store)
  std::string log_key;
  std::vector<std::string> witness_keys;  // --witness-key, repeatable
  std::string store;                      // witness --store
  std::string name, out;                  // key generate
  std::optional<uint64_t> size, index, old;
  std::string listen, port_file, key, state;  // witness serve
  std::vector<std::string> log_keys;          // witness serve --log
  std::string url;                            // witness submit
  std::string accept_weaker_lockdown;
  // Tests only (VerifyCliOptions::pause_fd); -1: none.
  int verify_pause_fd = -1;
};

// The subcommands' usage, one entry each, for --help.
std::string AuditCommandsUsage();

// Runs the subcommand whose words are `words` ("prove", "inclusion");
// returns the exit status (2 for an unknown subcommand or a usage error).
int RunAuditCommand(const std::vector<std::string>& words,
                    const AuditFlags& flags);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_AUDIT_COMMANDS_H_
