// The lockdown of garuda-audit's network subcommands, witness serve and
// witness submit: the role "witness" (policies/seccomp/witness.json).
// Defined here rather than in lib/lockdown/roles.h because only these two
// use it; it is TakeRoleLockdown with the role's choices, as every
// LockDown<Role> is.
#ifndef GARUDA_LIB_AUDIT_WITNESS_LOCKDOWN_H_
#define GARUDA_LIB_AUDIT_WITNESS_LOCKDOWN_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/lockdown/roles.h"

namespace garuda {

struct WitnessLockdown : RoleLockdown {
  // serve: its state folder; submit: the tree's witness folder.
  std::string writable;
  // submit: the witness's port; serve: none (it connects nowhere).
  std::vector<int> tcp_connect_ports;
};

absl::Status LockDownWitness(const WitnessLockdown& what,
                             LockdownReport* report);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_WITNESS_LOCKDOWN_H_
