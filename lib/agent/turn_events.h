// What a turn does, as it happens, for `--output-format stream-json`
// (lib/agent/stream_json.h). The session calls these in order; each does
// nothing unless overridden.
#ifndef GARUDA_LIB_AGENT_TURN_EVENTS_H_
#define GARUDA_LIB_AGENT_TURN_EVENTS_H_

#include "absl/strings/string_view.h"
#include "proto/agent_report.pb.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

class TurnEvents {
 public:
  virtual ~TurnEvents() = default;
  // A piece of the model's answer as it streams.
  virtual void Text(absl::string_view delta) {}
  // The model asked for a call; it is decided and run next.
  virtual void ToolCall(const provider::ToolCall& call) {}
  // How the call was decided and what came of it.
  virtual void ToolResult(const ToolCallReport& report) {}
  // The turn's usage after a model request ended (answers' counts so far).
  virtual void Usage(const UsageReport& usage) {}
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_TURN_EVENTS_H_
