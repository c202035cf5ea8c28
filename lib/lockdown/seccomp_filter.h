// A seccomp filter from a policy message (proto/seccomp_policy.proto, the
// data in policies/seccomp/*.json), built with libseccomp: a default action,
// per-syscall actions (allow, errno, kill, log), argument conditions (ioctl
// request equals TIOCSTI; socket domain not AF_UNIX) and extra architectures
// (32-bit x86, as Flatpak adds it).
#ifndef GARUDA_LIB_LOCKDOWN_SECCOMP_FILTER_H_
#define GARUDA_LIB_LOCKDOWN_SECCOMP_FILTER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/seccomp_policy.pb.h"

namespace garuda {

// Reads a policy file and the policies it includes (from the same folder),
// merged into one message without includes. For tools and tests: programs
// use SeccompPolicyForRole, whose data is compiled in.
absl::StatusOr<SeccompPolicy> LoadSeccompPolicy(const std::string& path);

// The compiled-in policy policies/seccomp/<role>.json with its includes
// merged, for the network choice: without the network, the rules marked
// network_off_only stay; with it they are dropped. Roles: auditor, applier,
// budgeter, stager, agent, and command (a command in the sandbox).
absl::StatusOr<SeccompPolicy> SeccompPolicyForRole(absl::string_view role,
                                                   bool allow_network);

// SeccompPolicyForRole's filter as compiled BPF (SeccompFilter::ExportBpf),
// compiled once per process for each role and network choice: the policies
// are compiled into the program, so a role's program never changes while
// it runs, and a process that starts many sandboxes (a session's stager)
// no longer pays libseccomp's 0.3 ms for each. Thread-safe.
absl::StatusOr<std::string> SeccompBpfForRole(absl::string_view role,
                                              bool allow_network);

// The names SeccompPolicyForRole knows, sorted.
std::vector<std::string> SeccompRoleNames();

// `policy` without its network_off_only rules (the network-on variant).
SeccompPolicy WithNetwork(SeccompPolicy policy);

// RAII over libseccomp's scmp_filter_ctx.
class SeccompFilter {
 public:
  // Every name, action, condition and architecture is checked; an error
  // names the rule ("rule 3 (ioctl): unknown constant TIOCSTX"). Rules marked
  // network_off_only are applied (the stricter reading).
  static absl::StatusOr<SeccompFilter> Build(const SeccompPolicy& policy);

  SeccompFilter(SeccompFilter&&) noexcept = default;
  SeccompFilter& operator=(SeccompFilter&&) noexcept = default;

  // The filter as seccomp_export_pfc prints it, for golden files.
  absl::StatusOr<std::string> ExportPfc() const;
  // The compiled BPF program (seccomp_export_bpf), as bubblewrap's --seccomp
  // takes it: the escape corpus gives bwrap the same filter as our sandbox.
  absl::StatusOr<std::string> ExportBpf() const;

  // Installs the filter on every thread of the process (TSYNC); sets
  // no_new_privs first, as the kernel requires without CAP_SYS_ADMIN. It
  // cannot be undone and is inherited by children and across exec.
  absl::Status Load();

 private:
  struct ContextDeleter {
    void operator()(void* context) const;
  };
  explicit SeccompFilter(void* context) : context_(context) {}

  std::unique_ptr<void, ContextDeleter> context_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_LOCKDOWN_SECCOMP_FILTER_H_
