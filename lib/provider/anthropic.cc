// Anthropic Messages with stream: true.
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "lib/provider/wire.h"

namespace garuda {
namespace provider {
namespace {

constexpr char kApiVersion[] = "2023-06-01";

class AnthropicDecoder : public StreamDecoder {
 public:
  using StreamDecoder::StreamDecoder;

  absl::Status OnEvent(const SseEvent& event) override {
    absl::StatusOr<Value> data = ParseJson(
        event.data, absl::StrCat("the data of a \"", event.event, "\" event"));
    if (!data.ok()) return absl::DataLossError(data.status().message());
    // The data's own type names the event; the event: line says the same.
    std::string type = StringMember(*data, "type");
    if (type.empty()) type = event.event;
    if (type == "message_start") {
      if (const Value* message = ObjectMember(*data, "message")) {
        model_ = StringMember(*message, "model");
        if (const Value* usage = ObjectMember(*message, "usage")) {
          ReadUsage(*usage, /*final=*/false);
        }
      }
    } else if (type == "content_block_start") {
      const Value* block = ObjectMember(*data, "content_block");
      if (block == nullptr) return Malformed(type, "content_block");
      const std::string kind = StringMember(*block, "type");
      if (kind == "text") {
        AddText(StringMember(*block, "text"));
      } else if (kind == "tool_use") {
        PartialToolCall& call = ToolCallAt(Index(*data));
        call.id = StringMember(*block, "id");
        call.name = StringMember(*block, "name");
        // The input arrives in input_json_delta events; a start that
        // already carries a non-empty input (no deltas) is kept as it is.
        const Value* input = ObjectMember(*block, "input");
        if (input != nullptr && input->struct_value().fields_size() > 0) {
          call.arguments = ToJson(*input);
          input_from_start_.insert(Index(*data));
        }
      }
    } else if (type == "content_block_delta") {
      const Value* delta = ObjectMember(*data, "delta");
      if (delta == nullptr) return Malformed(type, "delta");
      const std::string kind = StringMember(*delta, "type");
      if (kind == "text_delta") {
        AddText(StringMember(*delta, "text"));
      } else if (kind == "input_json_delta") {
        PartialToolCall& call = ToolCallAt(Index(*data));
        if (input_from_start_.erase(Index(*data)) > 0) call.arguments.clear();
        call.arguments += StringMember(*delta, "partial_json");
      }
      // thinking_delta, signature_delta, citations: not part of the answer.
    } else if (type == "message_delta") {
      if (const Value* delta = ObjectMember(*data, "delta")) {
        if (HasStringMember(*delta, "stop_reason")) {
          stop_reason_ = StringMember(*delta, "stop_reason");
        }
      }
      if (const Value* usage = ObjectMember(*data, "usage")) {
        ReadUsage(*usage, /*final=*/true);
      }
    } else if (type == "message_stop") {
      stopped_ = true;
    } else if (type == "error") {
      const Value* error = ObjectMember(*data, "error");
      return SetStreamError(error != nullptr ? *error : *data);
    }
    // ping and event types added later: nothing to do.
    return absl::OkStatus();
  }

  // The stop reason ends the content; message_stop only follows it.
  bool complete() const override { return stopped_ || !stop_reason_.empty(); }

  ModelResponse Response() const override {
    ModelResponse response;
    response.set_text(text_);
    FillToolCalls(&response);
    response.set_stop_reason(stop_reason_);
    response.set_model(model_);
    *response.mutable_usage() = usage_;
    // Input from message_start (or a later message_delta), output from the
    // final message_delta; every count that was sent must be valid.
    response.set_usage_reported(usage_valid_ && final_output_ &&
                                usage_.has_input_tokens());
    return response;
  }

 private:
  static int64_t Index(const Value& data) {
    const Value* index = Member(data, "index");
    return index != nullptr && index->kind_case() == Value::kNumberValue
               ? static_cast<int64_t>(index->number_value())
               : 0;
  }

  static absl::Status Malformed(const std::string& type, const char* field) {
    return absl::DataLossError(
        absl::StrCat("a \"", type, "\" event has no \"", field, "\" object"));
  }

  // Counts present in a usage object replace the earlier ones (the
  // message_delta counts are cumulative).
  void ReadUsage(const Value& usage, bool final) {
    struct Field {
      const char* name;
      void (TokenUsage::*set)(int64_t);
    };
    static constexpr Field kFields[] = {
        {"input_tokens", &TokenUsage::set_input_tokens},
        {"output_tokens", &TokenUsage::set_output_tokens},
        {"cache_read_input_tokens", &TokenUsage::set_cache_read_tokens},
        {"cache_creation_input_tokens", &TokenUsage::set_cache_write_tokens},
    };
    for (const Field& field : kFields) {
      const Value* member = Member(usage, field.name);
      if (member == nullptr || member->kind_case() == Value::kNullValue) {
        continue;
      }
      const auto count = TokenCountMember(usage, field.name);
      if (!count) {
        usage_valid_ = false;
        continue;
      }
      (usage_.*field.set)(*count);
      if (final && std::string(field.name) == "output_tokens") {
        final_output_ = true;
      }
    }
  }

  bool stopped_ = false;
  std::string stop_reason_;
  std::string model_;
  TokenUsage usage_;
  bool usage_valid_ = true;
  bool final_output_ = false;
  std::set<int64_t> input_from_start_;
};

class AnthropicWire : public WireFormat {
 public:
  absl::string_view provider() const override { return "anthropic"; }

  std::string Endpoint(absl::string_view base_url) const override {
    return absl::StrCat(absl::StripSuffix(base_url, "/"), "/v1/messages");
  }

  std::vector<std::string> Headers(const ApiKey& key) const override {
    std::vector<std::string> headers = {
        "Content-Type: application/json", "Accept: text/event-stream",
        absl::StrCat("anthropic-version: ", kApiVersion)};
    if (!key.empty()) {
      headers.push_back(absl::StrCat("x-api-key: ", key.value()));
    }
    return headers;
  }

  absl::StatusOr<std::string> Body(const ModelRequest& request,
                                   absl::string_view model,
                                   uint32_t max_tokens) const override {
    if (absl::Status roles = CheckRoles(request); !roles.ok()) return roles;
    Value body = JsonObject();
    Set(&body, "model", JsonString(model));
    Set(&body, "max_tokens", JsonNumber(max_tokens));
    Set(&body, "stream", JsonBool(true));
    if (!request.system().empty()) {
      Set(&body, "system", JsonString(request.system()));
    }
    Value* messages = Set(&body, "messages", JsonList());
    for (const ChatMessage& chat : request.messages()) {
      Value message = JsonObject();
      Set(&message, "role", JsonString(chat.role()));
      Value* content = Set(&message, "content", JsonList());
      // Tool results come first in a user message.
      for (const ToolResult& result : chat.tool_results()) {
        Value block = JsonObject();
        Set(&block, "type", JsonString("tool_result"));
        Set(&block, "tool_use_id", JsonString(result.tool_call_id()));
        Set(&block, "content", JsonString(result.content()));
        if (result.is_error()) Set(&block, "is_error", JsonBool(true));
        Append(content, std::move(block));
      }
      if (!chat.text().empty()) {
        Value block = JsonObject();
        Set(&block, "type", JsonString("text"));
        Set(&block, "text", JsonString(chat.text()));
        Append(content, std::move(block));
      }
      for (const ToolCall& call : chat.tool_calls()) {
        absl::StatusOr<Value> input = ParseJson(
            call.arguments_json().empty() ? "{}" : call.arguments_json(),
            absl::StrCat("the arguments of tool call ", call.id()));
        if (!input.ok()) return input.status();
        if (!input->has_struct_value()) {
          return absl::InvalidArgumentError(
              absl::StrCat("the arguments of tool call ", call.id(),
                           " are not a JSON object"));
        }
        Value block = JsonObject();
        Set(&block, "type", JsonString("tool_use"));
        Set(&block, "id", JsonString(call.id()));
        Set(&block, "name", JsonString(call.name()));
        Set(&block, "input", *std::move(input));
        Append(content, std::move(block));
      }
      if (content->list_value().values_size() == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("a ", chat.role(),
                         " message has no text, tool call or tool result"));
      }
      Append(messages, std::move(message));
    }
    absl::Status tools =
        SetTools(request, &body, [](const ToolDefinition& tool, Value schema) {
          Value entry = JsonObject();
          Set(&entry, "name", JsonString(tool.name()));
          if (!tool.description().empty()) {
            Set(&entry, "description", JsonString(tool.description()));
          }
          Set(&entry, "input_schema", std::move(schema));
          return entry;
        });
    if (!tools.ok()) return tools;
    return ToJson(body);
  }

  std::unique_ptr<StreamDecoder> NewDecoder(
      TextHandler on_text) const override {
    return std::make_unique<AnthropicDecoder>(std::move(on_text));
  }
};

}  // namespace

std::unique_ptr<WireFormat> AnthropicWireFormat() {
  return std::make_unique<AnthropicWire>();
}

}  // namespace provider
}  // namespace garuda
