#include "lib/agent/agent_requests.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/agent/usage_meter.h"
#include "lib/budget/limits.h"
#include "lib/budget/meter.h"

namespace garuda {
namespace agent {
namespace {

int64_t MessageChars(const provider::ChatMessage& message) {
  int64_t chars = static_cast<int64_t>(message.text().size());
  for (const provider::ToolCall& call : message.tool_calls()) {
    chars +=
        static_cast<int64_t>(call.arguments_json().size() + call.name().size());
  }
  for (const provider::ToolResult& result : message.tool_results()) {
    chars += static_cast<int64_t>(result.content().size());
  }
  return chars;
}

}  // namespace

AgentRequests::AgentRequests(const std::string& system_prompt,
                             const Conversation& conversation,
                             const ToolTable& tools, ToolProfile profile,
                             const provider::ModelClient* model,
                             RequestOwner owner)
    : system_prompt_(system_prompt),
      conversation_(conversation),
      tools_(tools),
      profile_(profile),
      model_(model),
      owner_(std::move(owner)) {}

provider::ModelRequest AgentRequests::Next(int step,
                                           size_t measured_messages) const {
  provider::ModelRequest request;
  request.set_system(system_prompt_);
  for (const provider::ChatMessage& message : conversation_.messages()) {
    *request.add_messages() = message;
  }
  for (provider::ToolDefinition& tool : tools_.Definitions(profile_)) {
    *request.add_tools() = std::move(tool);
  }
  // A child's step is sent only with its whole output limit: a step cut
  // short helps nobody, and what is left goes to its wrap-up request.
  if (owner_.depth > 0 && model_ != nullptr) {
    request.set_min_output_tokens(model_->options().max_tokens);
  }
  request.set_request_id(
      absl::StrCat(owner_.session_id,
                   owner_.depth > 0 ? absl::StrCat("-", owner_.agent_id) : "",
                   "-", turns_, "-", step + 1));
  if (last_input_tokens_ > 0) {
    int64_t new_chars = 0;
    for (size_t i = measured_messages; i < conversation_.messages().size();
         ++i) {
      new_chars += MessageChars(conversation_.messages()[i]);
    }
    request.set_input_tokens_hint(last_input_tokens_ +
                                  budget::TokensForChars(new_chars));
  }
  return request;
}

void AgentRequests::Count(const provider::ModelResponse& response,
                          UsageReport* usage) {
  // Requests, charges and usage_reported come from the turn's CountingMeter,
  // which also sees the attempts that failed.
  usage->set_input_tokens(
      AddCount(usage->input_tokens(), response.usage().input_tokens()));
  usage->set_output_tokens(
      AddCount(usage->output_tokens(), response.usage().output_tokens()));
  if (response.usage().has_input_tokens()) {
    last_input_tokens_ = response.usage().input_tokens();
  }
}

}  // namespace agent
}  // namespace garuda
