#include "lib/knowledge/code_tools_lockdown.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"

namespace garuda::knowledge {

absl::StatusOr<LockdownReport> LockDownCodeTools(
    const CodeToolsLockdownOptions& options) {
  LockdownOptions lockdown;
  lockdown.role = options.language_servers ? "code_tools_lsp" : "code_tools";
  // Nothing is written: answers go to descriptors opened before (the
  // channel, standard output). A language server's stderr goes to
  // /dev/null, which must be opened for writing.
  if (options.language_servers && ::access("/dev/null", F_OK) == 0) {
    lockdown.writable_paths.push_back("/dev/null");
  }
  lockdown.allow_network = false;
  lockdown.accept_weaker = options.accept_weaker;
  return LockDown(lockdown);
}

std::string DescribeCodeToolsLockdown(const CodeToolsLockdownOptions& options,
                                      const LockdownReport& report) {
  std::string line = absl::StrCat(
      "code tools locked down: no file writes, no network, ",
      options.language_servers ? "only the configured language servers start"
                               : "no programs start",
      " (Landlock ",
      report.landlock_enforced ? absl::StrCat("ABI ", report.landlock_abi)
                               : "off",
      ", seccomp ", report.seccomp_enforced ? "on" : "off", ")");
  if (!report.weaker.empty())
    absl::StrAppend(&line, "; weaker: ", report.weaker);
  return line;
}

}  // namespace garuda::knowledge
