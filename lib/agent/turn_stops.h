// How a turn ends when it cannot go on. A helper that is gone is an error
// (the session stops); a request the token budget refused, one the person
// cancelled and one that failed end the turn with a message to the person
// and, where the model should know, a note in the conversation.
#ifndef GARUDA_LIB_AGENT_TURN_STOPS_H_
#define GARUDA_LIB_AGENT_TURN_STOPS_H_

#include "absl/status/status.h"
#include "lib/agent/conversation.h"
#include "lib/agent/session_parts.h"
#include "lib/agent/turn_outcome.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

class TurnStops {
 public:
  // Of `parts` it uses the budget (its health), check_helpers, the audit
  // and the interaction, as they are at each call. Nothing is owned.
  TurnStops(const SessionParts& parts, Conversation& conversation)
      : parts_(parts), conversation_(conversation) {}

  // OK while every helper runs; else UNAVAILABLE "the session stopped: ...".
  absl::Status CheckHelpers() const;

  // The end of a turn whose `request` failed with `error` (budget, cancel,
  // provider), said in `outcome`; an error only when a helper is gone.
  absl::Status FailedRequest(const absl::Status& error,
                             const provider::ModelRequest& request,
                             TurnOutcome* outcome);
  // The person cancelled the answer's tool calls.
  void CallsCancelled(TurnOutcome* outcome);
  // The turn reached kMaxStepsPerTurn requests.
  void StepLimit(TurnOutcome* outcome);

 private:
  const SessionParts& parts_;
  Conversation& conversation_;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_TURN_STOPS_H_
