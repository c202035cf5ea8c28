// What the turn loop asks of child agents: run one answer's `task` calls.
// The loop hands the calls over with a ChildHost (what the children need of
// the agent that starts them, and nothing else) and gets their results back
// in call order.
#ifndef GARUDA_LIB_AGENT_CHILD_AGENTS_H_
#define GARUDA_LIB_AGENT_CHILD_AGENTS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/agent/children.h"
#include "lib/agent/session.h"
#include "lib/agent/session_parts.h"
#include "lib/base/cancel_flag.h"
#include "proto/agent_report.pb.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

// One child's turn to run, on the child's own thread.
struct ChildStart {
  SessionParts parts;  // its own interaction, audit tag, lease and model
  std::string agent_id;
  std::string prompt;
  const CancelFlag* cancel = nullptr;
  int64_t lease = 0;
  // How many characters its answer may carry in its parent's next request.
  int64_t answer_chars = 0;
};

// What the child's turn gave, and the descriptions of its own children (for
// the parent's /budget).
struct ChildRun {
  absl::StatusOr<TurnOutcome> outcome = TurnOutcome();
  std::map<std::string, std::string> descriptions;
};

// What child agents need of the agent whose `task` calls they run.
struct ChildHost {
  ChildSettings settings;
  int depth = 0;
  std::string agent_id;
  // The parent's own: its budget channel, model, audit, helpers' check.
  SessionParts parts;
  std::shared_ptr<AgentLocks> locks;
  Interaction* root_interaction = nullptr;
  AuditSink* session_audit = nullptr;
  // The parent's next request as the loop will send it (system prompt,
  // conversation, tools, input estimate).
  std::function<provider::ModelRequest()> next_request;
  int64_t last_reservation = 0;   // its running turn's last reservation
  int64_t last_input_tokens = 0;  // the provider's count of its last request
  // Numbers the children across the parent's turns (main.1, main.2, ...).
  int* children_started = nullptr;
  // Agent id -> the task's description, for /budget.
  std::map<std::string, std::string>* descriptions = nullptr;
  // Runs one child's turn as an agent of its own.
  std::function<ChildRun(const ChildStart&)> run_child;
};

// The `task` calls of one answer, run as child agents of `host` (children.h):
// at most agents.maxParallel at once, each on its own lease, thread and
// model connection, the parent's floor set before each starts; a child that
// the budget cannot start yet waits for a sibling's unused lease.
class ChildAgents {
 public:
  explicit ChildAgents(ChildHost host);
  ~ChildAgents();

  // `known_results` are the results of the answer's other calls, for the
  // floor.
  absl::StatusOr<std::vector<TaskDone>> RunTasks(
      const std::vector<provider::ToolCall>& calls,
      const provider::ChatMessage& known_results, const CancelFlag* cancel);

 private:
  struct Child;
  struct Batch;
  // The bound of the parent's next request with `pending` answers still to
  // come (spec T9's repair): its floor on the budgeter; measures the
  // result message for `batch`.
  int64_t FloorTokens(Batch& batch, int pending) const;
  // The child's first request: its reservation.
  int64_t FirstRequestTokens(const Child& child) const;
  // Starts the child (true), or leaves it waiting for a sibling's unused
  // lease (false, `*waiting`), or refuses it (false, its result in
  // `batch`). An error only when the budgeter or the audit is gone.
  absl::StatusOr<bool> StartChild(Batch& batch, size_t i, bool* waiting);
  // Joins an ended child, closes its lease (the unused part returns) and
  // makes its result, cut to what the floor kept for it.
  absl::StatusOr<TaskDone> FinishChild(Batch& batch, size_t i);
  // On child `i`'s thread, its Reserve refused: `missing` more tokens of
  // lease from what the parent has above its floor, when all of them are
  // free (true), waiting for siblings that may still return theirs.
  bool Refill(Batch& batch, size_t i, int64_t missing);

  ChildHost host_;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_CHILD_AGENTS_H_
