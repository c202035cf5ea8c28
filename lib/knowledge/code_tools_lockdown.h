// The lockdown of `garuda-agent tool` (the command line and `tool serve`):
// it parses the project's sources, which whoever wrote the project
// controls, and may start a language server. After it, the process writes
// no file (Landlock; /dev/null alone, for a server's stderr), opens no
// network socket, and starts no program unless a language server is
// configured (seccomp role code_tools, or code_tools_lsp).
#ifndef GARUDA_LIB_KNOWLEDGE_CODE_TOOLS_LOCKDOWN_H_
#define GARUDA_LIB_KNOWLEDGE_CODE_TOOLS_LOCKDOWN_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/lockdown/lockdown.h"

namespace garuda::knowledge {

struct CodeToolsLockdownOptions {
  // A language server may be started (knowledge.lsp is set for a language
  // of the question): execve and fork stay allowed.
  bool language_servers = false;
  std::optional<AcceptWeakerLockdown> accept_weaker;
};

// Must run before the first source file is read, while the process has one
// thread (the index parses on two).
absl::StatusOr<LockdownReport> LockDownCodeTools(
    const CodeToolsLockdownOptions& options);

// "locked down: no writes, no network, no programs (Landlock ABI 3, seccomp)".
std::string DescribeCodeToolsLockdown(const CodeToolsLockdownOptions& options,
                                      const LockdownReport& report);

}  // namespace garuda::knowledge

#endif  // GARUDA_LIB_KNOWLEDGE_CODE_TOOLS_LOCKDOWN_H_
