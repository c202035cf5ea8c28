// `garuda-agent -p PROMPT --output-format stream-json`: one JSON object a
// line as the turn goes (docs/agent.md "Streamed JSON").
#ifndef GARUDA_LIB_AGENT_STREAM_JSON_H_
#define GARUDA_LIB_AGENT_STREAM_JSON_H_

#include <string>

#include "google/protobuf/message.h"
#include "lib/agent/turn_events.h"

namespace garuda {
namespace agent {

// One line of JSON with every field, defaults included, so a script reads
// `isError`, `stopped` or a zero count without guessing what absence means.
// Counts in the report protos are 32-bit, so they print as numbers.
std::string ReportJson(const google::protobuf::Message& message);

class StreamJsonWriter : public TurnEvents {
 public:
  explicit StreamJsonWriter(int fd) : fd_(fd) {}

  // {"type":"session","sessionId":...,"model":...,"mode":...,"profile":...}
  void Session(const std::string& session_id, const std::string& model,
               const std::string& mode, const std::string& profile);
  void Text(absl::string_view delta) override;
  void ToolCall(const provider::ToolCall& call) override;
  void ToolResult(const ToolCallReport& report) override;
  void Usage(const UsageReport& usage) override;
  // {"type":"result", ...the OneShotReport's fields}
  void Result(const std::string& report_json);

 private:
  void Line(const std::string& json);
  int fd_;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_STREAM_JSON_H_
