// The helper programs of a session: garuda-auditor, garuda-budgeter,
// garuda-stager and garuda-applier, each started on its own channel, with
// the client of its channel (which lives beside the channel's server:
// lib/audit/client.h, lib/budget/meter.h, lib/staging/client.h,
// lib/apply/client.h). A helper that dies is
// noticed at the next call (its pidfd), and CheckAlive() names it: the
// session then stops with that reason.
#ifndef GARUDA_LIB_AGENT_HELPERS_H_
#define GARUDA_LIB_AGENT_HELPERS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/agent/services.h"
#include "lib/base/helper_paths.h"
#include "lib/budget/meter.h"
#include "lib/ipc/helper_process.h"

namespace garuda {
namespace agent {

inline constexpr char kAuditorProgram[] = "garuda-auditor";
inline constexpr char kBudgeterProgram[] = "garuda-budgeter";
inline constexpr char kStagerProgram[] = "garuda-stager";
inline constexpr char kApplierProgram[] = "garuda-applier";

struct HelperPaths {
  std::string auditor, budgeter, stager, applier;
};

// The four programs in `dir` (the folder of garuda-agent), each where
// HelperPath (lib/base/helper_paths.h) finds it: beside garuda-agent, else
// in the build tree.
HelperPaths HelperPathsIn(const std::string& dir);
// Each of the four is there and of garuda-agent's version; else the error
// names the first that is not, with the fix.
absl::Status CheckHelperPaths(const std::string& dir, const HelperPaths& paths);
using ::garuda::OwnProgramFolder;

struct HelpersOptions {
  HelperPaths paths;
  std::string project;
  std::string session_id;
  int64_t token_limit = 0;
  // Passed to garuda-stager serve when not empty.
  std::string command_mode;  // "direct" or "staged"
  std::string backend;
  // Who agrees to what the stager and the applier do (their --consent):
  // "terminal" when a person is at the terminal (they ask on /dev/tty
  // themselves), "rules" when nobody is (only allow rules of the settings
  // they read themselves), "relayed" for an editor's answers (ACP).
  std::string consent = "rules";
  // The terminal they ask on with "terminal"; empty: /dev/tty (tests give a
  // pseudo-terminal).
  std::string consent_terminal;
  // garuda-applier serve --apply-staged (with "rules" only): it applies a
  // staged command's changes without a question, and says so.
  bool apply_staged = false;
  // Passed to the auditor, the budgeter, the stager and the applier as
  // --accept-weaker-lockdown when not empty (a kernel without Landlock or
  // seccomp).
  std::string accept_weaker_lockdown;
  // A job's session: passed to the stager and the applier as --job, so
  // that each reads the job's scope and rules itself.
  std::string job_file;
  // The project whose audit log the auditor appends to; empty: `project`.
  // A job's session logs to its checkout's, beside the run's own events.
  std::string audit_project;
};

class Helpers {
 public:
  // Starts the auditor and the budgeter first (nothing is done unaudited or
  // unmetered), then the stager and the applier. A helper that cannot start
  // or that dies at once is an error naming it.
  static absl::StatusOr<std::unique_ptr<Helpers>> Start(
      const HelpersOptions& options);
  ~Helpers();

  AuditSink& audit() { return *audit_; }
  CommandService& stager() { return *stager_; }
  ApplyService& applier() { return *applier_; }
  budget::BudgetClient& budget() { return *budget_; }

  // OK while all four run; else UNAVAILABLE with the first dead one's exit
  // ("garuda-stager (pid 12) was killed by signal 9 (SIGKILL)").
  absl::Status CheckAlive();
  // Ends the stager's session and closes the audit log, then stops every
  // helper. The first error is returned; all are stopped anyway.
  absl::Status Stop();

  // The processes, for tests that kill one.
  ipc::HelperProcess& auditor_process() { return *auditor_; }
  ipc::HelperProcess& budgeter_process() { return *budgeter_; }
  ipc::HelperProcess& stager_process() { return *stager_process_; }
  ipc::HelperProcess& applier_process() { return *applier_process_; }

 private:
  Helpers() = default;
  std::unique_ptr<ipc::HelperProcess> auditor_, budgeter_, stager_process_,
      applier_process_;
  std::unique_ptr<AuditSink> audit_;
  std::unique_ptr<budget::BudgetClient> budget_;
  std::unique_ptr<CommandService> stager_;
  std::unique_ptr<ApplyService> applier_;
  bool stopped_ = false;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_HELPERS_H_
