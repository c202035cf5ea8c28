#include "lib/lockdown/roles.h"

#include <unistd.h>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/lockdown/landlock.h"

namespace garuda {

std::string DescribeEnforced(const LockdownReport& report) {
  return absl::StrCat(report.landlock_enforced
                          ? absl::StrCat("Landlock ABI ", report.landlock_abi)
                          : std::string("no Landlock"),
                      report.seccomp_enforced ? ", seccomp" : ", no seccomp");
}

absl::Status TakeRoleLockdown(
    const RoleLockdown& what, LockdownOptions options, LockdownReport* report,
    const lockdown_internal::LandlockAbiProbe& probe) {
  if (!what.accept_weaker_lockdown.empty()) {
    options.accept_weaker = AcceptWeakerLockdown{what.accept_weaker_lockdown};
  }
  absl::StatusOr<LockdownReport> done = lockdown_internal::LockDownWithProbe(
      options,
      probe ? probe : lockdown_internal::LandlockAbiProbe(LandlockAbiVersion));
  if (!done.ok()) {
    return absl::Status(
        done.status().code(),
        absl::StrCat("cannot lock down the ", options.role, ": ",
                     done.status().message(),
                     " (--accept-weaker-lockdown=WHY runs anyway)"));
  }
  // A role without Landlock by design (the stager's sandbox builder) always
  // has a `weaker`; it is news to the person only when they accepted less.
  if (!what.accept_weaker_lockdown.empty() && !done->weaker.empty() &&
      what.log) {
    what.log(absl::StrCat("weaker lockdown (--accept-weaker-lockdown): ",
                          done->weaker));
  }
  if (options.tcp_connect_ports) done->tcp_ports = *options.tcp_connect_ports;
  if (done->summary.empty()) {
    done->summary = absl::StrCat(
        options.role, " locked down (", DescribeEnforced(*done),
        done->weaker.empty() ? "" : "; weaker: ", done->weaker, ")");
  }
  if (report != nullptr) *report = *std::move(done);
  return absl::OkStatus();
}

namespace {

LockdownOptions Networkless(const std::string& role,
                            std::vector<std::string> writable) {
  LockdownOptions options;
  options.role = role;
  options.writable_paths = std::move(writable);
  options.allow_network = false;
  return options;
}

}  // namespace

absl::Status LockDownAuditor(const AuditorLockdown& what,
                             LockdownReport* report) {
  return TakeRoleLockdown(what, Networkless("auditor", {what.audit_folder}),
                          report);
}

absl::Status LockDownBudgeter(const BudgeterLockdown& what,
                              LockdownReport* report) {
  return TakeRoleLockdown(what, Networkless("budgeter", {what.session_folder}),
                          report);
}

absl::Status LockDownApplier(const ApplierLockdown& what,
                             LockdownReport* report) {
  return TakeRoleLockdown(what, Networkless("applier", what.writable), report);
}

absl::Status LockDownAudit(const AuditLockdown& what, LockdownReport* report) {
  // The auditor's filter fits: verify and witness never start a program.
  // No writable path: verify only reads, the witness store is open already.
  return TakeRoleLockdown(what, Networkless("auditor", {}), report);
}

absl::Status LockDownCodeTools(const CodeToolsLockdown& what,
                               LockdownReport* report) {
  std::vector<std::string> writable;
  // Nothing is written: answers go to descriptors opened before (the
  // channel, standard output). A language server's stderr goes to
  // /dev/null, which must be opened for writing.
  if (what.language_servers && ::access("/dev/null", F_OK) == 0) {
    writable.push_back("/dev/null");
  }
  LockdownOptions options = Networkless(
      what.language_servers ? "code_tools_lsp" : "code_tools", writable);
  LockdownReport done;
  RETURN_IF_ERROR(TakeRoleLockdown(what, options, &done));
  done.summary = absl::StrCat(
      "code tools locked down: no file writes, no network, ",
      what.language_servers ? "only the configured language servers start"
                            : "no programs start",
      " (Landlock ",
      done.landlock_enforced ? absl::StrCat("ABI ", done.landlock_abi) : "off",
      ", seccomp ", done.seccomp_enforced ? "on" : "off", ")");
  if (!done.weaker.empty())
    absl::StrAppend(&done.summary, "; weaker: ", done.weaker);
  if (report != nullptr) *report = std::move(done);
  return absl::OkStatus();
}

absl::Status NoLockDownGiven(const std::string& program) {
  return absl::InternalError(absl::StrCat(
      program,
      ": no lockdown step was given (options.lock_down): it does not "
      "serve without one"));
}

}  // namespace garuda
