// What a turn ends with, for the person's line session, one-shot runs and an
// editor (lib/acp): the answer, the calls, the usage and why it ended.
#ifndef GARUDA_LIB_AGENT_TURN_OUTCOME_H_
#define GARUDA_LIB_AGENT_TURN_OUTCOME_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "proto/agent_report.pb.h"

namespace garuda {
namespace agent {

// A turn stops after this many model requests, with a message.
inline constexpr int kMaxStepsPerTurn = 100;

// Why a turn ended: one-shot runs turn it into the exit status
// (lib/agent/agent.h), so scripts can tell a budget refusal and a cancel
// from other failures.
enum class TurnEnd {
  kAnswered,   // the model finished
  kBudget,     // the token budget refused the next request
  kCancelled,  // the person cancelled (Ctrl-C)
  kFailed,     // a provider error, no model, too many steps
};

// What a turn did, for one-shot mode.
struct TurnOutcome {
  std::string answer;  // the model's last text
  std::vector<ToolCallReport> tool_calls;
  UsageReport usage;
  std::string stopped;  // why it ended early, "" when the model finished
  TurnEnd end = TurnEnd::kAnswered;
  // kFailed because the turn reached kMaxStepsPerTurn requests (ACP's
  // max_turn_requests).
  bool step_limit = false;
  absl::Duration duration;  // from the prompt to the turn's end
  // The last model answer's stop reason ("end_turn", "max_tokens",
  // "refusal", "content_filter"...), for an editor's stopReason (lib/acp).
  std::string model_stop_reason;
  // What the turn's child agents used (each as its parent closed it); in
  // `usage` too once the turn ends.
  UsageReport children_usage;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_TURN_OUTCOME_H_
