// What differs between the providers: the request body and headers, and the
// reading of the event stream. The client (client.h) does the rest the same
// way for both.
#ifndef GARUDA_LIB_PROVIDER_WIRE_H_
#define GARUDA_LIB_PROVIDER_WIRE_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/provider/api_key.h"
#include "lib/provider/json.h"
#include "lib/provider/sse.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace provider {

using TextHandler = std::function<void(absl::string_view text)>;

// An error the provider sent inside a stream, after its HTTP 200.
struct StreamError {
  std::string type;
  std::string message;
};

// Reads one answer's events. Text deltas go to the handler as they arrive;
// tool calls are assembled from their deltas.
class StreamDecoder {
 public:
  explicit StreamDecoder(TextHandler on_text) : on_text_(std::move(on_text)) {}
  virtual ~StreamDecoder() = default;

  // An event that is not the provider's JSON is DATA_LOSS. An error event is
  // kept in stream_error() and returns ABORTED, which ends the transfer.
  virtual absl::Status OnEvent(const SseEvent& event) = 0;
  // The answer's end arrived (its stop reason, or the end marker).
  virtual bool complete() const = 0;
  // What arrived so far, with the usage and usage_reported decided: the
  // usage counts only when it is complete and valid.
  virtual ModelResponse Response() const = 0;

  const std::optional<StreamError>& stream_error() const {
    return stream_error_;
  }

 protected:
  absl::Status SetStreamError(const Value& error_object);
  void AddText(absl::string_view text);

  // Tool calls by the stream's index, in index order.
  struct PartialToolCall {
    std::string id;
    std::string name;
    std::string arguments;
  };
  PartialToolCall& ToolCallAt(int64_t index) { return tool_calls_[index]; }
  // The assembled calls; empty arguments become "{}".
  void FillToolCalls(ModelResponse* response) const;

  std::string text_;
  std::optional<StreamError> stream_error_;

 private:
  TextHandler on_text_;
  std::map<int64_t, PartialToolCall> tool_calls_;
};

class WireFormat {
 public:
  virtual ~WireFormat() = default;
  // "openai" or "anthropic".
  virtual absl::string_view provider() const = 0;
  // The URL of the streaming endpoint under the configured base URL.
  virtual std::string Endpoint(absl::string_view base_url) const = 0;
  // The request's headers; the key goes in its authentication header only
  // when it is not empty (a local server needs none).
  virtual std::vector<std::string> Headers(const ApiKey& key) const = 0;
  // The JSON body: a request that cannot be sent (a tool call whose
  // arguments are not a JSON object, a tool schema that is not JSON) is
  // INVALID_ARGUMENT naming the call or tool.
  virtual absl::StatusOr<std::string> Body(const ModelRequest& request,
                                           absl::string_view model,
                                           uint32_t max_tokens) const = 0;
  virtual std::unique_ptr<StreamDecoder> NewDecoder(
      TextHandler on_text) const = 0;
};

std::unique_ptr<WireFormat> OpenAiWireFormat();
std::unique_ptr<WireFormat> AnthropicWireFormat();

// The message of a provider's error body ({"error": {"type": ..., "message":
// ...}} in both formats), or else the start of the body.
std::string ErrorBodyMessage(absl::string_view body);

// Every message's role is "user" or "assistant", else INVALID_ARGUMENT.
absl::Status CheckRoles(const ModelRequest& request);

// Sets body["tools"] to one entry per tool, shaped by `entry` from the tool
// and its parameters schema (a JSON object; an empty object schema when the
// tool has none). Nothing is set when there are no tools. A schema that is
// not a JSON object is INVALID_ARGUMENT naming the tool.
absl::Status SetTools(const ModelRequest& request, Value* body,
                      const std::function<Value(const ToolDefinition& tool,
                                                Value schema)>& entry);

}  // namespace provider
}  // namespace garuda

#endif  // GARUDA_LIB_PROVIDER_WIRE_H_
