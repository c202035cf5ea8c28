#include "lib/lockdown/lockdown.h"

#include <dirent.h>
#include <errno.h>
#include <sys/prctl.h>

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/status_macros.h"
#include "lib/lockdown/landlock.h"
#include "lib/lockdown/seccomp_filter.h"

namespace garuda {
namespace {

absl::StatusOr<int> CountThreads() {
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return LastErrnoStatus("opendir(/proc/self/task)");
  int count = 0;
  while (const dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(tasks);
  return count;
}

// Whether the kernel has seccomp filters at all: PR_GET_SECCOMP fails with
// EINVAL on a kernel built without CONFIG_SECCOMP.
bool KernelHasSeccomp() {
  return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 || errno != EINVAL;
}

void AddWeaker(LockdownReport* report, const std::string& what) {
  if (!report->weaker.empty()) report->weaker += "; ";
  report->weaker += what;
}

}  // namespace

namespace lockdown_internal {

absl::StatusOr<LockdownReport> LockDownWithProbe(
    const LockdownOptions& options, const LandlockAbiProbe& probe) {
  if (options.role.empty()) {
    return absl::InvalidArgumentError("LockDown: no role given");
  }
  if (options.without_landlock && !options.writable_paths.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("LockDown: role ", options.role,
                     " leaves Landlock out, so it cannot confine writes to ",
                     options.writable_paths.front()));
  }
  ASSIGN_OR_RETURN(int threads, CountThreads());
  if (threads != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "LockDown must run before any thread starts (Landlock restricts only "
        "the calling thread); this process has ",
        threads, " threads"));
  }
  // Build the filter first: a bad policy fails before anything is applied.
  // The policy is read even where the kernel has no seccomp (a bad one is
  // still a mistake); the filter is built only where it can be loaded
  // (libseccomp refuses its TSYNC attribute without seccomp(2)).
  ASSIGN_OR_RETURN(SeccompPolicy policy,
                   SeccompPolicyForRole(options.role, options.allow_network));
  const bool has_seccomp = KernelHasSeccomp();
  std::optional<SeccompFilter> filter;
  if (has_seccomp) {
    ASSIGN_OR_RETURN(SeccompFilter built, SeccompFilter::Build(policy));
    filter.emplace(std::move(built));
  }
  int kernel_abi = 0;
  if (!options.without_landlock) {
    ASSIGN_OR_RETURN(kernel_abi, probe());
  }

  LockdownReport report;
  report.landlock_abi = kernel_abi;
  const std::string why =
      options.accept_weaker ? options.accept_weaker->why : std::string();

  // Every refusal comes before the first change to the process.
  const bool has_landlock = kernel_abi >= kLockdownMinLandlockAbi;
  if (!has_landlock && !options.accept_weaker && !options.without_landlock) {
    return absl::FailedPreconditionError(absl::StrCat(
        "role ", options.role, ": the kernel's Landlock ABI is ", kernel_abi,
        ", at least ", kLockdownMinLandlockAbi,
        " is needed to confine writes. fix: boot Linux 5.13 or newer with "
        "\"landlock\" in the lsm= boot parameter (or in CONFIG_LSM), and "
        "let a container runtime pass the landlock_* system calls"));
  }
  if (!has_seccomp && !options.accept_weaker) {
    return absl::FailedPreconditionError(absl::StrCat(
        "role ", options.role,
        ": the kernel has no seccomp filters. fix: a kernel built with "
        "CONFIG_SECCOMP_FILTER, and a container runtime that lets its "
        "processes install their own filter"));
  }

  // Safe: no_new_privs only takes away the gain of privileges on exec
  // (setuid bits, file capabilities); Landlock and seccomp need it, and a
  // process without them still gets this much.
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    return LastErrnoStatus("prctl(PR_SET_NO_NEW_PRIVS)");
  }

  if (options.without_landlock) {
    AddWeaker(&report, absl::StrCat("no Landlock for role ", options.role, ": ",
                                    options.without_landlock->why));
  } else if (!has_landlock) {
    report.weaker_accepted = true;
    AddWeaker(&report,
              absl::StrCat("no Landlock (kernel ABI ", kernel_abi,
                           "): writes are not confined to ",
                           options.writable_paths.size(),
                           " writable path(s); accepted because: ", why));
  } else {
    LandlockRuleset ruleset =
        LandlockRuleset::ForWritesWithAbi(kernel_abi, kLockdownMinLandlockAbi);
    for (const std::string& path : options.writable_paths) {
      ruleset.AllowWritesBeneath(path);
    }
    // A second wall behind the seccomp socket rule, where the kernel has it.
    if (!options.allow_network) ruleset.DenyTcp();
    if (options.allow_network && options.tcp_connect_ports) {
      for (int port : *options.tcp_connect_ports) {
        ruleset.AllowTcpConnect(port);
      }
      // No port at all: no TCP.
      if (options.tcp_connect_ports->empty()) ruleset.DenyTcp();
    }
    // Safe: Enforce only removes rights (see landlock.cc).
    absl::Status status = ruleset.Enforce();
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("role ", options.role,
                                       ": Landlock: ", status.message()));
    }
    report.landlock_enforced = true;
    report.tcp_ports_enforced = options.allow_network &&
                                options.tcp_connect_ports &&
                                ruleset.tcp_denied();
  }

  if (!has_seccomp) {
    report.weaker_accepted = true;
    AddWeaker(&report, absl::StrCat("no seccomp; accepted because: ", why));
    return report;
  }
  // Last, so that the filter cannot stand in the way of the steps above.
  absl::Status status = filter->Load();
  if (!status.ok()) {
    return absl::Status(status.code(), absl::StrCat("role ", options.role, ": ",
                                                    status.message()));
  }
  report.seccomp_enforced = true;
  return report;
}

}  // namespace lockdown_internal

absl::StatusOr<LockdownReport> LockDown(const LockdownOptions& options) {
  return lockdown_internal::LockDownWithProbe(options, LandlockAbiVersion);
}

}  // namespace garuda
