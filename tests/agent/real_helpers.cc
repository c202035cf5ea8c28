#include "tests/agent/real_helpers.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/changeset/test_tree.h"
#include "tests/agent/fakes.h"

namespace garuda {
namespace testing {

absl::Status StartRealHelpers(const std::string& project_root,
                              const std::string& session, int64_t limit,
                              std::unique_ptr<ipc::HelperProcess>* auditor,
                              std::unique_ptr<ipc::HelperProcess>* budgeter,
                              std::unique_ptr<AuditSink>* audit,
                              std::unique_ptr<budget::BudgetClient>* budget) {
  ipc::HelperOptions auditor_options;
  auditor_options.argv = {Runfile("cmd/garuda-auditor/garuda-auditor"), "serve",
                          "--channel-fd=3", "--project", project_root};
  ASSIGN_OR_RETURN(*auditor, ipc::HelperProcess::Spawn(auditor_options));
  *audit = AuditChannelClient(auditor->get());
  ipc::HelperOptions budgeter_options;
  budgeter_options.argv = {
      Runfile("cmd/garuda-budgeter/garuda-budgeter"), "serve", "--channel-fd=3",
      absl::StrCat("--session=", session), absl::StrCat("--limit=", limit)};
  ASSIGN_OR_RETURN(*budgeter, ipc::HelperProcess::Spawn(budgeter_options));
  *budget = std::make_unique<budget::BudgetClient>(budgeter->get());
  return absl::OkStatus();
}

std::string ClosedAuditLogs(AuditSink& audit, const std::string& home) {
  if (!audit.Close().ok()) return "";
  std::string all;
  for (const auto& [path, content] :
       Snapshot(JoinPath(home, ".garuda/audit"))) {
    if (absl::EndsWith(path, ".jsonl")) all += content;
  }
  return all;
}

}  // namespace testing
}  // namespace garuda
