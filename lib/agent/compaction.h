// Compaction (/compact, and automatic before a request that would pass
// model.contextWindow): the conversation is replaced by the model's summary
// of it. The summary request is reserved like every other (spec T9's
// repair): max(previous context, the summary request's whole input, its
// system prompt included) + 4096, and it is journaled, so --resume
// continues from the summary.
#ifndef GARUDA_LIB_AGENT_COMPACTION_H_
#define GARUDA_LIB_AGENT_COMPACTION_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "lib/agent/agent_requests.h"
#include "lib/agent/conversation.h"
#include "lib/agent/session_parts.h"
#include "lib/agent/turn_outcome.h"
#include "lib/agent/turn_stops.h"
#include "lib/base/cancel_flag.h"
#include "lib/provider/client.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

class Compaction {
 public:
  // Of `parts` it uses the model, the interaction and the audit. Nothing is
  // owned.
  Compaction(const SessionParts& parts, Conversation& conversation,
             AgentRequests& requests, TurnStops& stops,
             const std::string& session_id, int64_t context_window)
      : parts_(parts),
        conversation_(conversation),
        requests_(requests),
        stops_(stops),
        session_id_(session_id),
        context_window_(context_window) {}

  // `next` would pass model.contextWindow. A conversation of one message (a
  // summary, a prompt) is never due: there is nothing to gain, and it
  // would loop.
  bool Due(const provider::ModelRequest& next) const;

  // Replaces the conversation by the model's summary (true), journaled.
  // False with a notice when it did not happen (the request failed: then
  // `outcome`, when given, says why the turn ends).
  absl::StatusOr<bool> Run(provider::RequestMeter* meter,
                           const CancelFlag* cancel, TurnOutcome* outcome);

 private:
  const SessionParts& parts_;
  Conversation& conversation_;
  AgentRequests& requests_;
  TurnStops& stops_;
  const std::string& session_id_;
  const int64_t context_window_;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_COMPACTION_H_
