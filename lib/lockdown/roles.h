// The role table and the one lockdown call of every Garuda program.
//
// Each program's main.cc reads: flags -> options -> open what the role
// needs -> LockDownAs(role, needs, weaker) -> serve. The table (roles.cc)
// says per role which seccomp policy it takes, whether Landlock confines
// its writes, whether it keeps a network and which ports, and what it may
// still open afterwards; `needs` carries only what is known once the role's
// files are open (the audit folder, the session folder, the project). A
// lockdown that cannot be applied is an error, and the program refuses to
// serve, unless the person gave --accept-weaker-lockdown WHY (`weaker`).
// docs/lockdown.md has the table in words.
#ifndef GARUDA_LIB_LOCKDOWN_ROLES_H_
#define GARUDA_LIB_LOCKDOWN_ROLES_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/lockdown/lockdown.h"

namespace garuda {

enum class Role {
  kAuditor,       // garuda-auditor: its project's audit folder
  kBudgeter,      // garuda-budgeter serve: the session folder
  kApplier,       // garuda-applier: the project and the undo store, or nothing
  kAudit,         // garuda-audit verify, witness: no writes
  kCodeTools,     // garuda-agent tool: no writes, no programs
  kCodeToolsLsp,  // the same with configured language servers
  kAgent,         // garuda-agent's session: its folder, the provider's port
  kAcpFront,      // garuda-agent acp: relays lines only
  kStager,        // garuda-stager serve, run: builds sandboxes (no Landlock)
  kStagingGuard,  // the staged run's guard: the staging root
  kProxy,         // garuda-stager proxy: TCP out to the allowed ports
  kWitness,       // garuda-audit witness serve/submit: its state folder
};

// What a role may still write or reach after its lockdown, known only once
// it has opened what it needs. The table refuses needs its role cannot have
// (a writable path for a role that writes nothing).
struct RoleNeeds {
  // Absolute, existing paths beneath which writes stay allowed (Landlock).
  std::vector<std::string> writable_paths;
  // Roles with a network by port (the agent, the proxy): the TCP ports it
  // may still connect to; none: no IP socket at all.
  std::vector<int> tcp_connect_ports;
};

// --accept-weaker-lockdown WHY: the one way to run with less than the
// role's lockdown (a kernel without Landlock or seccomp). Empty `why`: such
// a kernel stops the program.
struct WeakerLockdown {
  std::string why;
  // Told "weaker lockdown (--accept-weaker-lockdown): ..." when less was
  // applied; the programs pass their stderr line.
  std::function<void(const std::string& line)> say;
};

// The one call. Irreversible for this process and all it starts afterwards;
// it must run while the process has one thread. The error says what is
// missing and the fix, in one wording for every role: "cannot lock down the
// <role>: ... ; nothing is served (--accept-weaker-lockdown WHY runs with
// less)". The report's `summary` is the line for a person.
absl::StatusOr<LockdownReport> LockDownAs(Role role, const RoleNeeds& needs,
                                          const WeakerLockdown& weaker);

// The role's name in messages ("auditor", "staging guard").
std::string RoleName(Role role);

// "Landlock ABI 6, seccomp" / "no Landlock, no seccomp": the kernel's part
// of a summary.
std::string DescribeEnforced(const LockdownReport& report);

namespace lockdown_internal {
// LockDownAs with the Landlock ABI probe replaced (tests act out a kernel
// without Landlock).
absl::StatusOr<LockdownReport> LockDownAsWithProbe(
    Role role, const RoleNeeds& needs, const WeakerLockdown& weaker,
    const LandlockAbiProbe& probe);
}  // namespace lockdown_internal

}  // namespace garuda

#endif  // GARUDA_LIB_LOCKDOWN_ROLES_H_
