#include "lib/agent/stream_json.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
#include "lib/provider/json.h"

namespace garuda {
namespace agent {
namespace {

using provider::JsonString;

// A message's fields (every one, defaults included) after "type".
std::string WithType(const char* type, const google::protobuf::Message& m) {
  const std::string body = ReportJson(m);
  return absl::StrCat("{\"type\":\"", type, "\"",
                      body.size() > 2 ? "," : "", body.substr(1));
}

}  // namespace

std::string ReportJson(const google::protobuf::Message& message) {
  return MessageToJsonLineWithDefaults(message);
}

void StreamJsonWriter::Line(const std::string& json) {
  // A reader that went away must not stop the turn; the result is also in
  // the exit status.
  WriteAll(fd_, absl::StrCat(json, "\n")).IgnoreError();
}

void StreamJsonWriter::Session(const std::string& session_id,
                               const std::string& model,
                               const std::string& mode,
                               const std::string& profile) {
  provider::Value event = provider::JsonObject();
  provider::Set(&event, "type", JsonString("session"));
  provider::Set(&event, "sessionId", JsonString(session_id));
  provider::Set(&event, "model", JsonString(model));
  provider::Set(&event, "mode", JsonString(mode));
  provider::Set(&event, "profile", JsonString(profile));
  Line(provider::ToJson(event));
}

void StreamJsonWriter::Text(absl::string_view delta) {
  provider::Value event = provider::JsonObject();
  provider::Set(&event, "type", JsonString("text"));
  provider::Set(&event, "text", JsonString(delta));
  Line(provider::ToJson(event));
}

void StreamJsonWriter::ToolCall(const provider::ToolCall& call) {
  provider::Value event = provider::JsonObject();
  provider::Set(&event, "type", JsonString("tool_call"));
  provider::Set(&event, "id", JsonString(call.id()));
  provider::Set(&event, "tool", JsonString(call.name()));
  provider::Set(&event, "argumentsJson", JsonString(call.arguments_json()));
  Line(provider::ToJson(event));
}

void StreamJsonWriter::ToolResult(const ToolCallReport& report) {
  Line(WithType("tool_result", report));
}

void StreamJsonWriter::Usage(const UsageReport& usage) {
  Line(WithType("usage", usage));
}

void StreamJsonWriter::Result(const std::string& report_json) {
  Line(absl::StrCat("{\"type\":\"result\",", report_json.substr(1)));
}

}  // namespace agent
}  // namespace garuda
