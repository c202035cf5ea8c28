#include "sandbox/confine.h"

#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/lockdown/landlock.h"

namespace garuda {
namespace {

int LastCapability() {
  auto text = ReadFileToString("/proc/sys/kernel/cap_last_cap");
  if (text.ok()) {
    int value = std::atoi(text->c_str());
    if (value > 0) return value;
  }
  return 63;  // beyond the last one, PR_CAPBSET_DROP fails with EINVAL
}

absl::Status SetLimit(int resource, uint64_t value, const char* name) {
  if (value == 0) return absl::OkStatus();
  struct rlimit limit = {value, value};
  if (::setrlimit(resource, &limit) != 0) {
    return LastErrnoStatus(absl::StrCat("setrlimit(", name, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status DropCapabilities() {
  // Safe and needed: these only take capabilities away. SECBIT_NOROOT stops
  // uid 0 (the caller's uid when it is root) from gaining capabilities at
  // execve; the locks stop the command from undoing it.
  if (::prctl(PR_SET_SECUREBITS,
              SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                  SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                  SECBIT_NO_CAP_AMBIENT_RAISE |
                  SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) != 0) {
    return LastErrnoStatus("prctl(PR_SET_SECUREBITS)");
  }
  int last = LastCapability();
  for (int cap = 0; cap <= last; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) {
      return LastErrnoStatus(absl::StrCat("prctl(PR_CAPBSET_DROP, ", cap, ")"));
    }
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) {
    return LastErrnoStatus("prctl(PR_CAP_AMBIENT_CLEAR_ALL)");
  }
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &header, data) != 0) {
    return LastErrnoStatus("capset (drop all)");
  }
  return absl::OkStatus();
}

absl::Status SetResourceLimits(const Limits& limits) {
  RETURN_IF_ERROR(SetLimit(RLIMIT_CPU, limits.cpu_seconds(), "CPU"));
  RETURN_IF_ERROR(SetLimit(RLIMIT_AS, limits.memory_bytes(), "AS"));
  RETURN_IF_ERROR(SetLimit(RLIMIT_NPROC, limits.processes(), "NPROC"));
  RETURN_IF_ERROR(SetLimit(RLIMIT_FSIZE, limits.file_size_bytes(), "FSIZE"));
  return absl::OkStatus();
}

absl::StatusOr<Confinement> PrepareConfinement(
    const SandboxPolicy& policy, std::vector<std::string> writable) {
  std::string role =
      policy.seccomp_role().empty() ? "command" : policy.seccomp_role();
  // The allow list opens IP sockets (to reach the proxy on loopback): the
  // command's filter then keeps every other family out.
  if (policy.has_network_proxy() && !policy.network() && role == "command") {
    role = "command_proxied";
  }
  ASSIGN_OR_RETURN(
      std::string bpf,
      SeccompBpfForRole(role,
                        policy.network() || policy.has_network_proxy()));
  if (bpf.empty() || bpf.size() % sizeof(struct sock_filter) != 0 ||
      bpf.size() / sizeof(struct sock_filter) > BPF_MAXINSNS) {
    return absl::InternalError(absl::StrCat(
        "seccomp filter of role ", role, ": a BPF program of ", bpf.size(),
        " bytes is not a whole number of instructions within the limit"));
  }
  Confinement confinement{std::move(writable),
                          std::max(1, policy.min_landlock_abi()),
                          policy.network(), 0, std::move(bpf)};
  if (!policy.network() && policy.has_network_proxy()) {
    confinement.tcp_connect_port =
        static_cast<int>(policy.network_proxy().port());
  }
  return confinement;
}

absl::Status ConfineCommand(Confinement& confinement) {
  // Safe: no_new_privs only takes away (setuid and file capabilities stop
  // working), and the kernel requires it for the filter below.
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return LastErrnoStatus("prctl(PR_SET_NO_NEW_PRIVS)");
  }
  // A second wall for writes, in case a mount were ever wrong: writes only
  // beneath the writable paths. Fails closed on a kernel without Landlock.
  LandlockRuleset ruleset =
      LandlockRuleset::ForWrites(confinement.min_landlock_abi);
  for (const std::string& path : confinement.writable) {
    ruleset.AllowWritesBeneath(path);
  }
  // Network off: TCP bind and connect refused by Landlock too, a second
  // wall behind the seccomp filter's socket rule.
  if (!confinement.network) ruleset.DenyTcp();
  // The allow list: the proxy's port on the sandbox's own loopback only.
  if (confinement.tcp_connect_port != 0) {
    ruleset.AllowTcpConnect(confinement.tcp_connect_port);
  }
  RETURN_IF_ERROR(ruleset.Enforce());
  // Safe: a filter only narrows what this process and its children may do.
  // The program is libseccomp's own output for the policy (SeccompFilter,
  // whose golden files are tested), checked for size in
  // PrepareConfinement; TSYNC as SeccompFilter::Load does.
  struct sock_fprog program = {
      static_cast<unsigned short>(confinement.seccomp_bpf.size() /
                                  sizeof(struct sock_filter)),
      reinterpret_cast<struct sock_filter*>(confinement.seccomp_bpf.data())};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC,
                &program) != 0) {
    return LastErrnoStatus("seccomp(SECCOMP_SET_MODE_FILTER)");
  }
  return absl::OkStatus();
}

}  // namespace garuda
