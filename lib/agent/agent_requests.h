// The model requests of one agent: what each is made of (the agent's system
// prompt, its conversation and the tools its table offers), its id, and the
// input the last answer measured, from which the next request's size is
// estimated. The turn loop, compaction, a child's wrap-up and the floor of
// its parent ask it for the next request.
#ifndef GARUDA_LIB_AGENT_AGENT_REQUESTS_H_
#define GARUDA_LIB_AGENT_AGENT_REQUESTS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "lib/agent/conversation.h"
#include "lib/provider/client.h"
#include "lib/tools/tool_table.h"
#include "proto/agent_report.pb.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

// Whose requests: their ids are "<session>-<turn>-<step>" for the
// session's agent (depth 0), "<session>-<agent>-<turn>-<step>" for a child.
struct RequestOwner {
  std::string session_id;
  std::string agent_id;
  int depth = 0;
};

class AgentRequests {
 public:
  // Nothing is owned; `system_prompt`, `conversation` and `tools` are read
  // as they are when each request is made. `model` may be null (no model).
  AgentRequests(const std::string& system_prompt,
                const Conversation& conversation, const ToolTable& tools,
                ToolProfile profile, const provider::ModelClient* model,
                RequestOwner owner);

  // A new turn: the requests' ids count from its first step.
  void StartTurn() { ++turns_; }

  // The request of `step` of this turn: the whole conversation, the tools,
  // and an input estimate of the last measured input plus the messages
  // from `measured_messages` on.
  provider::ModelRequest Next(int step, size_t measured_messages) const;

  // An answer's usage, added to `usage`; its input is the next estimate's
  // base.
  void Count(const provider::ModelResponse& response, UsageReport* usage);
  int64_t last_input_tokens() const { return last_input_tokens_; }
  // The conversation was replaced (compaction, /clear): nothing measured.
  void ForgetMeasure() { last_input_tokens_ = 0; }

 private:
  const std::string& system_prompt_;
  const Conversation& conversation_;
  const ToolTable& tools_;
  const ToolProfile profile_;
  const provider::ModelClient* const model_;
  const RequestOwner owner_;
  int turns_ = 0;
  int64_t last_input_tokens_ = 0;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_AGENT_REQUESTS_H_
