// The turn loop: the prompt, then request, the answer's tool calls through
// the table, their results, the next request, until the model answers
// without calls. Compaction, the calls, the ends of a turn that cannot go
// on and a child's wrap-up are the pieces it calls; Session::RunTurn hands
// them over for one turn.
#ifndef GARUDA_LIB_AGENT_TURN_LOOP_H_
#define GARUDA_LIB_AGENT_TURN_LOOP_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/agent/agent_requests.h"
#include "lib/agent/answer_calls.h"
#include "lib/agent/compaction.h"
#include "lib/agent/conversation.h"
#include "lib/agent/interaction.h"
#include "lib/agent/turn_events.h"
#include "lib/agent/turn_outcome.h"
#include "lib/agent/turn_stops.h"
#include "lib/agent/usage_meter.h"
#include "lib/base/cancel_flag.h"
#include "lib/provider/client.h"

namespace garuda {
namespace agent {

// What one turn uses of its agent; nothing is owned.
struct TurnPieces {
  provider::ModelClient* model = nullptr;  // not null
  PersonDisplay* display = nullptr;
  TurnEvents* events = nullptr;  // may be null
  Conversation* conversation = nullptr;
  AgentRequests* requests = nullptr;
  TurnStops* stops = nullptr;
  Compaction* compaction = nullptr;
  AnswerCalls* calls = nullptr;
  // A child whose next request the budget refused: one wrap-up request at
  // `step`, else a structured "budget exhausted" answer. Empty for the
  // session's agent, whose turn just ends.
  std::function<absl::Status(int step, CountingMeter* meter,
                             TurnOutcome* outcome)>
      wrap_up;
  // Before each request: rows added at run time (a server's changed MCP
  // tools). May be empty.
  std::function<void()> before_request;
};

class TurnLoop {
 public:
  // `cancel` may be null; the requests are metered by `meter`.
  TurnLoop(const TurnPieces& pieces, const CancelFlag* cancel,
           CountingMeter* meter, TurnOutcome* outcome)
      : p_(pieces), cancel_(cancel), meter_(meter), outcome_(outcome) {}

  // The turn of `text` (the prompt, after the person's own commands'
  // output). An error only when the session cannot go on.
  absl::Status Run(const std::string& text);

 private:
  bool Cancelled() const;
  absl::Status AddPrompt(const std::string& text);
  // Sends `request`, streaming its text to the person; `streamed` is what
  // arrived of the answer that counts.
  absl::StatusOr<provider::ModelResponse> Send(
      const provider::ModelRequest& request, std::string* streamed);
  // A request that failed with `error` at `step`.
  absl::Status Failed(const absl::Status& error,
                      const provider::ModelRequest& request, int step,
                      const std::string& streamed);
  // The answer's usage and text, in the outcome and the conversation.
  absl::Status Answered(const provider::ModelResponse& response);

  const TurnPieces& p_;
  const CancelFlag* cancel_;
  CountingMeter* meter_;
  TurnOutcome* outcome_;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_TURN_LOOP_H_
