// The tool calls of one model answer: every call but the batched ones
// (`task`) runs through the tool table in call order, one agent at a time
// at the helpers; the batched ones then run together as child agents
// (children.h). Results and reports are put back in call order, and the
// results go to the conversation as one message.
#ifndef GARUDA_LIB_AGENT_ANSWER_CALLS_H_
#define GARUDA_LIB_AGENT_ANSWER_CALLS_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "lib/agent/children.h"
#include "lib/agent/conversation.h"
#include "lib/agent/tool_calls.h"
#include "lib/agent/turn_events.h"
#include "lib/agent/turn_outcome.h"
#include "lib/agent/turn_stops.h"
#include "lib/base/cancel_flag.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

// Runs an answer's batched calls as child agents; `known_results` are the
// results of its other calls (for the parent's floor).
using RunTasks = std::function<absl::StatusOr<std::vector<TaskDone>>(
    const std::vector<provider::ToolCall>& calls,
    const provider::ChatMessage& known_results, const CancelFlag* cancel)>;

class AnswerCalls {
 public:
  // `tools` (with the turn's cancel) is what each call runs with; `lock` is
  // held around each call (every agent of the session shares it); `events`
  // may be null. Nothing is owned.
  AnswerCalls(const ToolContext& tools, absl::Mutex* lock, TurnEvents* events,
              TurnStops& stops, Conversation& conversation, RunTasks run_tasks)
      : tools_(tools),
        lock_(lock),
        events_(events),
        stops_(stops),
        conversation_(conversation),
        run_tasks_(std::move(run_tasks)) {}

  // True when the person cancelled (the calls not run say so in their
  // results). The calls' reports and the children's usage go to `outcome`.
  absl::StatusOr<bool> Run(const provider::ModelResponse& response,
                           TurnOutcome* outcome);

 private:
  bool Cancelled() const;
  // Shows and reports a finished call's result.
  void Report(ToolCallDone& done) const;

  const ToolContext& tools_;
  absl::Mutex* lock_;
  TurnEvents* events_;
  TurnStops& stops_;
  Conversation& conversation_;
  RunTasks run_tasks_;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_ANSWER_CALLS_H_
