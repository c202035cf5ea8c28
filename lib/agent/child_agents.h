// What the turn loop asks of child agents: run one answer's `task` calls.
// The children are Sessions of their own (session_children.cc); the loop
// hands the calls over and gets their results back in call order.
#ifndef GARUDA_LIB_AGENT_CHILD_AGENTS_H_
#define GARUDA_LIB_AGENT_CHILD_AGENTS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/agent/children.h"
#include "lib/base/cancel_flag.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

class Session;

// The `task` calls of one answer, run as child agents of `s_` (children.h):
// at most agents.maxParallel at once, each on its own lease, thread and
// model connection, the parent's floor set before each starts.
class ChildAgents {
 public:
  explicit ChildAgents(Session& parent) : s_(parent) {}

  // `known_results` are the results of the answer's other calls, for the
  // floor.
  absl::StatusOr<std::vector<TaskDone>> RunTasks(
      const std::vector<provider::ToolCall>& calls,
      const provider::ChatMessage& known_results, const CancelFlag* cancel);

 private:
  struct Child;
  // The bound of the parent's next request with `pending_children` answers
  // still to come (spec T9's repair): its floor on the budgeter.
  int64_t FloorTokens(const provider::ChatMessage& known_results,
                      const std::string& pending_id,
                      int pending_children) const;
  // Sets the floor, opens the lease and starts the child's thread (true);
  // false when the ledger refused a lease (`refused` says so). An error
  // only when the budgeter or the audit is gone.
  absl::StatusOr<bool> StartChild(const provider::ToolCall& call, Child& agent,
                                  const provider::ChatMessage& known_results,
                                  int pending, const CancelFlag* cancel,
                                  ChildInteraction& view,
                                  const std::function<void()>& finished,
                                  TaskDone* refused);
  // Joins an ended child, closes its lease (the unused part returns) and
  // makes its result.
  absl::StatusOr<TaskDone> FinishChild(const provider::ToolCall& call,
                                       Child& agent, ChildInteraction& view);

  Session& s_;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_CHILD_AGENTS_H_
