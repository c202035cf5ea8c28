// OpenAI Chat Completions, as OpenAI serves it and as the OpenAI-compatible
// local servers do (llama.cpp's llama-server, vLLM, Ollama's /v1 endpoint).
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "lib/provider/wire.h"

namespace garuda {
namespace provider {
namespace {

class OpenAiDecoder : public StreamDecoder {
 public:
  using StreamDecoder::StreamDecoder;

  absl::Status OnEvent(const SseEvent& event) override {
    if (absl::StripAsciiWhitespace(event.data) == "[DONE]") {
      done_ = true;
      return absl::OkStatus();
    }
    absl::StatusOr<Value> chunk = ParseJson(event.data, "a stream chunk");
    if (!chunk.ok()) return absl::DataLossError(chunk.status().message());
    if (const Value* error = ObjectMember(*chunk, "error")) {
      return SetStreamError(*error);
    }
    if (HasStringMember(*chunk, "error")) {
      Value error = JsonObject();
      Set(&error, "message", JsonString(StringMember(*chunk, "error")));
      return SetStreamError(error);
    }
    if (HasStringMember(*chunk, "model"))
      model_ = StringMember(*chunk, "model");
    if (const Value* usage = ObjectMember(*chunk, "usage")) {
      usage_ = *usage;
      has_usage_ = true;
    }
    const auto* choices = ListMember(*chunk, "choices");
    if (choices == nullptr) return absl::OkStatus();
    for (const Value& choice : choices->values()) {
      // One answer is asked for (no "n"); other choices are not ours.
      const Value* index = Member(choice, "index");
      if (index != nullptr && index->number_value() != 0) continue;
      if (const Value* delta = ObjectMember(choice, "delta")) {
        AddText(StringMember(*delta, "content"));
        if (const auto* calls = ListMember(*delta, "tool_calls")) {
          for (int i = 0; i < calls->values_size(); ++i) {
            AddToolCallDelta(calls->values(i), i);
          }
        }
      }
      if (HasStringMember(choice, "finish_reason")) {
        finish_reason_ = StringMember(choice, "finish_reason");
      }
    }
    return absl::OkStatus();
  }

  bool complete() const override { return done_ || !finish_reason_.empty(); }

  ModelResponse Response() const override {
    ModelResponse response;
    response.set_text(text_);
    FillToolCalls(&response);
    response.set_model(model_);
    if (finish_reason_ == "stop" && response.tool_calls_size() == 0) {
      response.set_stop_reason("end_turn");
    } else if (finish_reason_ == "tool_calls" ||
               finish_reason_ == "function_call" ||
               (finish_reason_ == "stop" && response.tool_calls_size() > 0)) {
      // Ollama ends an answer with tool calls with "stop".
      response.set_stop_reason("tool_use");
    } else if (finish_reason_ == "length") {
      response.set_stop_reason("max_tokens");
    } else {
      response.set_stop_reason(finish_reason_);
    }
    if (has_usage_) {
      TokenUsage* usage = response.mutable_usage();
      const auto input = TokenCountMember(usage_, "prompt_tokens");
      const auto output = TokenCountMember(usage_, "completion_tokens");
      if (input) usage->set_input_tokens(*input);
      if (output) usage->set_output_tokens(*output);
      // cached_tokens are part of prompt_tokens here, so they add nothing.
      bool valid = input && output;
      if (valid && Member(usage_, "total_tokens") != nullptr) {
        const auto total = TokenCountMember(usage_, "total_tokens");
        valid = total && *total == *input + *output;
      }
      response.set_usage_reported(valid);
    }
    return response;
  }

 private:
  void AddToolCallDelta(const Value& delta, int position) {
    const Value* index = Member(delta, "index");
    PartialToolCall& call =
        ToolCallAt(index != nullptr && index->kind_case() == Value::kNumberValue
                       ? static_cast<int64_t>(index->number_value())
                       : position);
    if (HasStringMember(delta, "id") && call.id.empty()) {
      call.id = StringMember(delta, "id");
    }
    if (const Value* function = ObjectMember(delta, "function")) {
      // The name comes whole in the call's first delta.
      if (HasStringMember(*function, "name") && call.name.empty()) {
        call.name = StringMember(*function, "name");
      }
      const Value* arguments = ObjectMember(*function, "arguments");
      if (arguments != nullptr) {
        // Some servers send the arguments whole, as an object.
        call.arguments = ToJson(*arguments);
      } else {
        call.arguments += StringMember(*function, "arguments");
      }
    }
  }

  bool done_ = false;
  std::string finish_reason_;
  std::string model_;
  Value usage_;
  bool has_usage_ = false;
};

class OpenAiWire : public WireFormat {
 public:
  absl::string_view provider() const override { return "openai"; }

  std::string Endpoint(absl::string_view base_url) const override {
    return absl::StrCat(absl::StripSuffix(base_url, "/"), "/chat/completions");
  }

  std::vector<std::string> Headers(const ApiKey& key) const override {
    std::vector<std::string> headers = {"Content-Type: application/json",
                                        "Accept: text/event-stream"};
    if (!key.empty()) {
      headers.push_back(absl::StrCat("Authorization: Bearer ", key.value()));
    }
    return headers;
  }

  absl::StatusOr<std::string> Body(const ModelRequest& request,
                                   absl::string_view model,
                                   uint32_t max_tokens) const override {
    if (absl::Status roles = CheckRoles(request); !roles.ok()) return roles;
    Value body = JsonObject();
    Set(&body, "model", JsonString(model));
    Value* messages = Set(&body, "messages", JsonList());
    if (!request.system().empty()) {
      Value message = JsonObject();
      Set(&message, "role", JsonString("system"));
      Set(&message, "content", JsonString(request.system()));
      Append(messages, std::move(message));
    }
    for (const ChatMessage& chat : request.messages()) {
      if (chat.role() == "assistant") {
        Value message = JsonObject();
        Set(&message, "role", JsonString("assistant"));
        Set(&message, "content",
            chat.text().empty() && chat.tool_calls_size() > 0
                ? JsonNull()
                : JsonString(chat.text()));
        if (chat.tool_calls_size() > 0) {
          Value* calls = Set(&message, "tool_calls", JsonList());
          for (const ToolCall& call : chat.tool_calls()) {
            Value entry = JsonObject();
            Set(&entry, "id", JsonString(call.id()));
            Set(&entry, "type", JsonString("function"));
            Value* function = Set(&entry, "function", JsonObject());
            Set(function, "name", JsonString(call.name()));
            Set(function, "arguments",
                JsonString(call.arguments_json().empty()
                               ? "{}"
                               : call.arguments_json()));
            Append(calls, std::move(entry));
          }
        }
        Append(messages, std::move(message));
      } else {
        // Each result is its own "tool" message, before the user's text.
        for (const ToolResult& result : chat.tool_results()) {
          Value message = JsonObject();
          Set(&message, "role", JsonString("tool"));
          Set(&message, "tool_call_id", JsonString(result.tool_call_id()));
          // This wire has no error flag: the text says it, once (the
          // tools' own error results already start with "Error: ").
          const bool marked = absl::StartsWith(result.content(), "Error: ");
          Set(&message, "content",
              JsonString(result.is_error() && !marked
                             ? absl::StrCat("Error: ", result.content())
                             : result.content()));
          Append(messages, std::move(message));
        }
        if (!chat.text().empty() || chat.tool_results_size() == 0) {
          Value message = JsonObject();
          Set(&message, "role", JsonString("user"));
          Set(&message, "content", JsonString(chat.text()));
          Append(messages, std::move(message));
        }
      }
    }
    absl::Status tools =
        SetTools(request, &body, [](const ToolDefinition& tool, Value schema) {
          Value entry = JsonObject();
          Set(&entry, "type", JsonString("function"));
          Value* function = Set(&entry, "function", JsonObject());
          Set(function, "name", JsonString(tool.name()));
          if (!tool.description().empty()) {
            Set(function, "description", JsonString(tool.description()));
          }
          Set(function, "parameters", std::move(schema));
          return entry;
        });
    if (!tools.ok()) return tools;
    Set(&body, "max_tokens", JsonNumber(max_tokens));
    Set(&body, "stream", JsonBool(true));
    Value* options = Set(&body, "stream_options", JsonObject());
    Set(options, "include_usage", JsonBool(true));
    return ToJson(body);
  }

  std::unique_ptr<StreamDecoder> NewDecoder(
      TextHandler on_text) const override {
    return std::make_unique<OpenAiDecoder>(std::move(on_text));
  }
};

}  // namespace

std::unique_ptr<WireFormat> OpenAiWireFormat() {
  return std::make_unique<OpenAiWire>();
}

}  // namespace provider
}  // namespace garuda
