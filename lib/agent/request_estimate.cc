#include "lib/agent/request_estimate.h"

#include <algorithm>
#include <memory>

#include "lib/budget/limits.h"
#include "lib/budget/meter.h"
#include "lib/provider/wire.h"

namespace garuda {
namespace agent {

absl::StatusOr<std::string> RequestBody(const provider::ModelClient* model,
                                        const provider::ModelRequest& request) {
  if (model == nullptr) {
    return absl::FailedPreconditionError("no model is configured");
  }
  const provider::ClientOptions& options = model->options();
  std::unique_ptr<provider::WireFormat> wire =
      options.provider == "anthropic" ? provider::AnthropicWireFormat()
                                      : provider::OpenAiWireFormat();
  return wire->Body(request, options.model, options.max_tokens);
}

int64_t CarriedChars(const provider::ModelClient* model, absl::string_view text,
                     bool is_error) {
  provider::ModelRequest request;
  provider::ChatMessage* message = request.add_messages();
  message->set_role("user");
  provider::ToolResult* result = message->add_tool_results();
  result->set_tool_call_id("call");
  result->set_is_error(is_error);
  absl::StatusOr<std::string> empty = RequestBody(model, request);
  result->set_content(std::string(text));
  absl::StatusOr<std::string> with = RequestBody(model, request);
  if (!empty.ok() || !with.ok()) return static_cast<int64_t>(text.size());
  return static_cast<int64_t>(with->size()) -
         static_cast<int64_t>(empty->size());
}

int64_t InputEstimate(const provider::ModelClient* model,
                      const provider::ModelRequest& request) {
  absl::StatusOr<std::string> body = RequestBody(model, request);
  // The client estimates from the same body (lib/provider/client.cc).
  const int64_t whole =
      body.ok() ? budget::TokensForChars(static_cast<int64_t>(body->size()))
                : 0;
  return std::max(whole, request.input_tokens_hint());
}

bool CompactionDue(const provider::ModelClient* model, int64_t context_window,
                   int64_t next_input_tokens) {
  if (model == nullptr) return false;
  return next_input_tokens + static_cast<int64_t>(model->options().max_tokens) >
         context_window;
}

int64_t CompactionReserveIfDue(const provider::ModelClient* model,
                               int64_t context_window,
                               int64_t last_input_tokens,
                               int64_t next_input_tokens) {
  if (!CompactionDue(model, context_window, next_input_tokens)) return 0;
  return budget::EstimateCompactionTokens(
      std::max(last_input_tokens, next_input_tokens),
      next_input_tokens * budget::kCharsPerToken +
          static_cast<int64_t>(sizeof(kSummaryNote)));
}

}  // namespace agent
}  // namespace garuda
