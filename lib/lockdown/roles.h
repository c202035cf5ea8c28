// The lockdown step of each program, one call shape for all:
//
//   absl::Status LockDown<Role>(const <Role>Lockdown& what,
//                               LockdownReport* report);
//
// `what` is what the role still needs after the lockdown (the paths it may
// write, its kind of process) on top of RoleLockdown, which every role
// shares: the reason given with --accept-weaker-lockdown and where the
// "weaker lockdown" line goes. `report` (may be null) says what the kernel
// holds, with one line for a person (LockdownReport::summary).
//
// Each program's main.cc calls its role's function itself once it has opened
// what the role needs and before it reads its first request, or, where the
// paths are only known inside the library that opens them (the auditor's
// log folder, the budgeter's session folder, the applier's project), hands
// the function to that library's options (`options.lock_down =
// LockDownAuditor;`), which calls it at that point and refuses to serve
// without one. The steps themselves (no_new_privs, Landlock, the role's
// seccomp filter) are lib/lockdown/lockdown.h's LockDown; docs/lockdown.md
// says what each role may do. The agent's own role (garuda-agent's session)
// is lib/agent/agent_lockdown.h's LockDownAgent, in the same shape; the
// stager's two kinds of process are stager_lockdown.h's LockDownStager.
#ifndef GARUDA_LIB_LOCKDOWN_ROLES_H_
#define GARUDA_LIB_LOCKDOWN_ROLES_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/lockdown/lockdown.h"

namespace garuda {

// What every role's lockdown takes.
struct RoleLockdown {
  // The reason given with --accept-weaker-lockdown=WHY. Empty: a kernel
  // without Landlock or seccomp stops the program.
  std::string accept_weaker_lockdown;
  // Told "weaker lockdown (--accept-weaker-lockdown): ..." when a weaker
  // one was accepted. Empty: the line is only in the report.
  std::function<void(const std::string& line)> log;
};

// What a library's options hold: its role's LockDown<Role> (a main.cc sets
// it; empty: the library refuses to serve, NoLockDownGiven).
template <typename What>
using LockDownStep = std::function<absl::Status(const What&, LockdownReport*)>;

// garuda-auditor: writes only its project's audit folder; no network, no
// exec (policies/seccomp/auditor.json).
struct AuditorLockdown : RoleLockdown {
  std::string audit_folder;  // absolute, existing
};
absl::Status LockDownAuditor(const AuditorLockdown& what,
                             LockdownReport* report);

// garuda-budgeter: writes only the session folder; no network, no exec
// (policies/seccomp/budgeter.json).
struct BudgeterLockdown : RoleLockdown {
  std::string session_folder;  // absolute, existing
};
absl::Status LockDownBudgeter(const BudgeterLockdown& what,
                              LockdownReport* report);

// garuda-applier: writes only beneath `writable` (an apply or an undo: the
// project and the undo store; show, diff-dirs, undo --list: nothing), its
// seccomp filter (no execve: it never starts a program), no network (AF_UNIX
// only).
struct ApplierLockdown : RoleLockdown {
  std::vector<std::string> writable;  // absolute, existing
};
absl::Status LockDownApplier(const ApplierLockdown& what,
                             LockdownReport* report);

// garuda-audit (verify, witness): it only reads, so after this it can write
// no file (descriptors opened before, such as a witness store, stay usable),
// open no network socket and start no program: Landlock with no writable
// path and the "auditor" seccomp role (neither program ever starts another).
struct AuditLockdown : RoleLockdown {};
absl::Status LockDownAudit(const AuditLockdown& what, LockdownReport* report);

// `garuda-agent tool` (the command line and `tool serve`): it parses the
// project's sources, which whoever wrote the project controls, and may start
// a language server. After it the process writes no file (Landlock;
// /dev/null alone, for a server's stderr), opens no network socket, and
// starts no program unless a language server is configured (seccomp role
// code_tools, or code_tools_lsp). Before the first source file is read.
struct CodeToolsLockdown : RoleLockdown {
  // A language server may be started: execve and fork stay allowed.
  bool language_servers = false;
};
absl::Status LockDownCodeTools(const CodeToolsLockdown& what,
                               LockdownReport* report);

// The error of a library whose options hold no lockdown step: a program
// never serves without its lockdown.
absl::Status NoLockDownGiven(const std::string& program);

// The common part of every LockDown<Role>: `options` (the role's choices)
// with RoleLockdown's reason, the error in the one wording ("cannot lock
// down the <role>: ... (--accept-weaker-lockdown=WHY runs anyway)"), the
// weaker line on `what.log`, the report filled (its summary "<role> locked
// down (...)" unless the role writes its own). `probe` replaces the
// Landlock ABI probe (tests; null: the kernel's).
absl::Status TakeRoleLockdown(
    const RoleLockdown& what, LockdownOptions options, LockdownReport* report,
    const lockdown_internal::LandlockAbiProbe& probe = nullptr);

// "Landlock ABI 6, seccomp" / "no Landlock, no seccomp": the kernel's part
// of a summary.
std::string DescribeEnforced(const LockdownReport& report);

}  // namespace garuda

#endif  // GARUDA_LIB_LOCKDOWN_ROLES_H_
