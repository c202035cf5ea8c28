#include "lib/audit/witness_lockdown.h"

namespace garuda {

absl::Status LockDownWitness(const WitnessLockdown& what,
                             LockdownReport* report) {
  LockdownOptions options;
  options.role = "witness";
  // Writes only where the role keeps its state; the listening socket (serve)
  // and curl's handle (submit) were made before.
  options.writable_paths = {what.writable};
  options.allow_network = true;
  options.tcp_connect_ports = what.tcp_connect_ports;
  return TakeRoleLockdown(what, options, report);
}

}  // namespace garuda
