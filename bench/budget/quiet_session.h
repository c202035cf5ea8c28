// A session for the benchmarks: lib/agent's Session against a scripted
// provider server, with the real garuda-budgeter, nobody to show anything
// to or to ask, and no audit log.
#ifndef GARUDA_BENCH_BUDGET_QUIET_SESSION_H_
#define GARUDA_BENCH_BUDGET_QUIET_SESSION_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/agent/session.h"
#include "lib/budget/client.h"
#include "lib/ipc/helper_process.h"
#include "lib/permissions/permissions.h"
#include "lib/provider/client.h"
#include "lib/tools/project.h"

namespace garuda {
namespace budget {

struct QuietSessionOptions {
  std::string budgeter_path;
  std::string session_id;
  int64_t limit = 0;
  std::string project_root;
  std::string base_url;  // the scripted OpenAI server's
  uint32_t max_tokens = 1000;
  uint32_t min_output_tokens = 0;  // 0: the client's default
  agent::ChildSettings agents;
};

class QuietSession {
 public:
  static absl::StatusOr<std::unique_ptr<QuietSession>> Start(
      const QuietSessionOptions& options);
  ~QuietSession();

  agent::Session& session() { return *session_; }
  BudgetClient& budget() { return *budget_; }
  // Ends the session and stops the budgeter (its journal flushed).
  absl::Status Stop();

 private:
  class Silent;
  class NoAudit;
  QuietSession();

  std::unique_ptr<Silent> person_;
  std::unique_ptr<NoAudit> audit_;
  Permissions permissions_;
  std::unique_ptr<ipc::HelperProcess> budgeter_;
  std::unique_ptr<BudgetClient> budget_;
  std::unique_ptr<Project> project_;
  std::unique_ptr<provider::ModelClient> model_;
  std::unique_ptr<agent::Session> session_;
};

}  // namespace budget
}  // namespace garuda

#endif  // GARUDA_BENCH_BUDGET_QUIET_SESSION_H_
