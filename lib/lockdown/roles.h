// The lockdown step of each program, one shape for all: LockDown<Role>.
// A program's main.cc names its role's function in the options of the
// library that opens and serves (`options.lock_down = LockDownAuditor;`);
// the library calls it once everything the role needs is open and before it
// reads its first request, with the paths the process may still write. The
// steps themselves (no_new_privs, Landlock, the role's seccomp filter) are
// lib/lockdown/lockdown.h's LockDown; docs/lockdown.md says what each role
// may do.
#ifndef GARUDA_LIB_LOCKDOWN_ROLES_H_
#define GARUDA_LIB_LOCKDOWN_ROLES_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace garuda {

struct RoleLockdownOptions {
  // Landlock: file writes, creates, removes and renames only beneath these
  // (absolute, existing) paths.
  std::vector<std::string> writable_paths;
  // The reason given with --accept-weaker-lockdown=WHY. Empty: a kernel
  // without Landlock or seccomp stops the program.
  std::string accept_weaker_lockdown;
  // Told "weaker lockdown: ..." when a weaker one was accepted.
  std::function<void(const std::string& line)> log;
};

// What a library's options hold: one of the functions below.
using LockDownRole = std::function<absl::Status(const RoleLockdownOptions&)>;

// garuda-auditor: writes only its project's audit folder; no network, no
// exec (policies/seccomp/auditor.json).
absl::Status LockDownAuditor(const RoleLockdownOptions& options);

// garuda-budgeter: writes only the session folder; no network, no exec
// (policies/seccomp/budgeter.json).
absl::Status LockDownBudgeter(const RoleLockdownOptions& options);

// The error of a library whose options hold no LockDownRole: a program
// never serves without its lockdown.
absl::Status NoLockDownGiven(const std::string& program);

}  // namespace garuda

#endif  // GARUDA_LIB_LOCKDOWN_ROLES_H_
