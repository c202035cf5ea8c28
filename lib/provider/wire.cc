#include "lib/provider/wire.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace garuda {
namespace provider {

absl::Status StreamDecoder::SetStreamError(const Value& error_object) {
  StreamError error;
  error.type = StringMember(error_object, "type");
  error.message = StringMember(error_object, "message");
  if (error.message.empty()) error.message = ToJson(error_object);
  stream_error_ = error;
  return absl::AbortedError(absl::StrCat(
      "the provider sent an error in the stream: ",
      error.type.empty() ? "" : absl::StrCat(error.type, ": "), error.message));
}

void StreamDecoder::AddText(absl::string_view text) {
  if (text.empty()) return;
  text_.append(text.data(), text.size());
  if (on_text_) on_text_(text);
}

void StreamDecoder::FillToolCalls(ModelResponse* response) const {
  for (const auto& [index, partial] : tool_calls_) {
    ToolCall* call = response->add_tool_calls();
    call->set_id(partial.id);
    call->set_name(partial.name);
    call->set_arguments_json(partial.arguments.empty() ? "{}"
                                                       : partial.arguments);
  }
}

std::string ErrorBodyMessage(absl::string_view body) {
  constexpr size_t kShown = 500;
  absl::StatusOr<Value> parsed = ParseJson(body, "the error body");
  if (parsed.ok()) {
    const Value* error = ObjectMember(*parsed, "error");
    if (error != nullptr) {
      const std::string type = StringMember(*error, "type");
      const std::string message = StringMember(*error, "message");
      if (!message.empty()) {
        std::string text =
            type.empty() ? message : absl::StrCat(type, ": ", message);
        if (text.size() > kShown)
          text = absl::StrCat(text.substr(0, kShown), "...");
        return text;
      }
    } else if (HasStringMember(*parsed, "error")) {
      // llama.cpp and some proxies: {"error": "text"}.
      return StringMember(*parsed, "error").substr(0, kShown);
    }
  }
  absl::string_view start = absl::StripAsciiWhitespace(body);
  if (start.empty()) return "(empty body)";
  if (start.size() > kShown) {
    return ValidUtf8(absl::StrCat(start.substr(0, kShown), "..."));
  }
  return ValidUtf8(start);
}

namespace {

absl::StatusOr<Value> ToolSchema(const ToolDefinition& tool) {
  if (tool.parameters_json().empty()) {
    Value schema = JsonObject();
    Set(&schema, "type", JsonString("object"));
    Set(&schema, "properties", JsonObject());
    return schema;
  }
  absl::StatusOr<Value> schema = ParseJson(
      tool.parameters_json(), absl::StrCat("the schema of tool ", tool.name()));
  if (!schema.ok()) return schema.status();
  if (!schema->has_struct_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the schema of tool ", tool.name(), " is not a JSON object"));
  }
  return schema;
}

}  // namespace

absl::Status CheckRoles(const ModelRequest& request) {
  for (const ChatMessage& chat : request.messages()) {
    if (chat.role() != "user" && chat.role() != "assistant") {
      return absl::InvalidArgumentError(
          absl::StrCat("a message has the role \"", chat.role(),
                       "\"; use \"user\" or \"assistant\""));
    }
  }
  return absl::OkStatus();
}

absl::Status SetTools(const ModelRequest& request, Value* body,
                      const std::function<Value(const ToolDefinition& tool,
                                                Value schema)>& entry) {
  if (request.tools_size() == 0) return absl::OkStatus();
  Value* tools = Set(body, "tools", JsonList());
  for (const ToolDefinition& tool : request.tools()) {
    absl::StatusOr<Value> schema = ToolSchema(tool);
    if (!schema.ok()) return schema.status();
    Append(tools, entry(tool, *std::move(schema)));
  }
  return absl::OkStatus();
}

}  // namespace provider
}  // namespace garuda
