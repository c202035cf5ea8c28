#include "lib/agent/turn_loop.h"

#include <utility>

#include "absl/strings/match.h"
#include "lib/base/status_macros.h"
#include "lib/budget/limits.h"

namespace garuda {
namespace agent {

bool TurnLoop::Cancelled() const {
  return cancel_ != nullptr && cancel_->cancelled();
}

absl::Status TurnLoop::AddPrompt(const std::string& text) {
  Conversation& conversation = *p_.conversation;
  if (!conversation.messages().empty() &&
      conversation.messages().back().role() == "user") {
    return conversation.NoteForModel(text);
  }
  provider::ChatMessage user;
  user.set_role("user");
  user.set_text(text);
  return conversation.Add(std::move(user));
}

absl::StatusOr<provider::ModelResponse> TurnLoop::Send(
    const provider::ModelRequest& request, std::string* streamed) {
  provider::StreamCallbacks callbacks;
  callbacks.on_text = [this, streamed](absl::string_view delta) {
    streamed->append(delta.data(), delta.size());
    p_.display->ShowText(delta);
    if (p_.events != nullptr) p_.events->Text(delta);
  };
  callbacks.on_retry = [this, streamed](const provider::RetryNotice& notice) {
    streamed->clear();
    p_.display->ShowRetry(notice.reason);
  };
  return p_.model->Send(request, meter_, callbacks, cancel_);
}

absl::Status TurnLoop::Failed(const absl::Status& error,
                              const provider::ModelRequest& request, int step,
                              const std::string& streamed) {
  // What arrived of the answer is kept as the turn's answer.
  if (!streamed.empty()) outcome_->answer = streamed;
  if (p_.wrap_up && absl::IsResourceExhausted(error) &&
      absl::StartsWith(error.message(), budget::kTokenBudget)) {
    return p_.wrap_up(step, meter_, outcome_);
  }
  return p_.stops->FailedRequest(error, request, outcome_);
}

absl::Status TurnLoop::Answered(const provider::ModelResponse& response) {
  if (!response.text().empty()) p_.display->ShowText("\n");
  p_.requests->Count(response, &outcome_->usage);
  outcome_->model_stop_reason = response.stop_reason();
  if (p_.events != nullptr) {
    UsageReport so_far = outcome_->usage;
    meter_->Fill(&so_far);
    AddUsage(outcome_->children_usage, &so_far);
    p_.events->Usage(so_far);
  }
  provider::ChatMessage assistant;
  assistant.set_role("assistant");
  assistant.set_text(response.text());
  for (const provider::ToolCall& call : response.tool_calls()) {
    *assistant.add_tool_calls() = call;
  }
  RETURN_IF_ERROR(p_.conversation->Add(assistant));
  outcome_->answer = response.text();
  return absl::OkStatus();
}

absl::Status TurnLoop::Run(const std::string& text) {
  RETURN_IF_ERROR(AddPrompt(text));
  const Conversation& conversation = *p_.conversation;
  size_t measured_messages = 0;
  for (int step = 0; step < kMaxStepsPerTurn; ++step) {
    if (p_.before_request) p_.before_request();
    provider::ModelRequest request = p_.requests->Next(step, measured_messages);
    measured_messages = conversation.messages().size();
    // After a cancel (also one seen by a child), no new request starts.
    if (step > 0 && Cancelled()) {
      return p_.stops->FailedRequest(absl::CancelledError("cancelled"), request,
                                     outcome_);
    }
    if (p_.compaction->Due(request)) {
      ASSIGN_OR_RETURN(bool compacted,
                       p_.compaction->Run(meter_, cancel_, outcome_));
      if (!compacted) return absl::OkStatus();
      request = p_.requests->Next(step, conversation.messages().size());
      measured_messages = conversation.messages().size();
    }
    std::string streamed;
    absl::StatusOr<provider::ModelResponse> response = Send(request, &streamed);
    if (!response.ok()) {
      return Failed(response.status(), request, step, streamed);
    }
    RETURN_IF_ERROR(Answered(*response));
    if (response->tool_calls().empty()) return absl::OkStatus();
    ASSIGN_OR_RETURN(bool cancelled, p_.calls->Run(*response, outcome_));
    if (cancelled) {
      p_.stops->CallsCancelled(outcome_);
      return absl::OkStatus();
    }
  }
  p_.stops->StepLimit(outcome_);
  return absl::OkStatus();
}

}  // namespace agent
}  // namespace garuda
