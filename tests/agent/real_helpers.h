// The real garuda-auditor and garuda-budgeter as helper processes for the
// session tests (tests/agent), and the audit log they leave.
#ifndef GARUDA_TESTS_AGENT_REAL_HELPERS_H_
#define GARUDA_TESTS_AGENT_REAL_HELPERS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "lib/audit/client.h"
#include "lib/budget/client.h"
#include "lib/ipc/helper_process.h"

namespace garuda {
namespace testing {

// `garuda-auditor serve` for `project_root` and `garuda-budgeter serve` for
// `session` with `limit`, from the test's runfiles, with their clients.
absl::Status StartRealHelpers(const std::string& project_root,
                              const std::string& session, int64_t limit,
                              std::unique_ptr<ipc::HelperProcess>* auditor,
                              std::unique_ptr<ipc::HelperProcess>* budgeter,
                              std::unique_ptr<AuditSink>* audit,
                              std::unique_ptr<budget::BudgetClient>* budget);

// Closes `audit` and returns every log under <home>/.garuda/audit, joined.
std::string ClosedAuditLogs(AuditSink& audit, const std::string& home);

}  // namespace testing
}  // namespace garuda

#endif  // GARUDA_TESTS_AGENT_REAL_HELPERS_H_
