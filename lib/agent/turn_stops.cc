#include "lib/agent/turn_stops.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/agent/tool_calls.h"
#include "lib/base/status_macros.h"
#include "lib/budget/limits.h"

namespace garuda {
namespace agent {

absl::Status TurnStops::CheckHelpers() const {
  if (!parts_.check_helpers) return absl::OkStatus();
  absl::Status alive = parts_.check_helpers();
  if (!alive.ok()) {
    return absl::UnavailableError(
        absl::StrCat("the session stopped: ", alive.message()));
  }
  return absl::OkStatus();
}

absl::Status TurnStops::FailedRequest(const absl::Status& error,
                                      const provider::ModelRequest& request,
                                      TurnOutcome* outcome) {
  // A budgeter that is gone means no more metered requests.
  if (!parts_.budget->health().ok()) {
    RETURN_IF_ERROR(CheckHelpers());
    return absl::UnavailableError(absl::StrCat(
        "the session stopped: ", parts_.budget->health().message()));
  }
  RETURN_IF_ERROR(CheckHelpers());
  if (absl::IsResourceExhausted(error) &&
      absl::StartsWith(error.message(), budget::kTokenBudget)) {
    outcome->end = TurnEnd::kBudget;
    outcome->stopped = absl::StrCat(
        "token budget: the session's token budget cannot cover the next "
        "model request, so this turn ended (",
        error.message(), ")");
    RETURN_IF_ERROR(parts_.audit->Record(
        MakeEvent("budget_refused", "", request.request_id(), "refused",
                  error.message())));
    parts_.interaction->ShowNotice(outcome->stopped);
    return conversation_.NoteForModel(
        absl::StrCat("[Garuda: ", outcome->stopped,
                     ". Finish with what you have or ask the person to raise "
                     "budget.tokenBudget.]"));
  }
  if (absl::IsCancelled(error)) {
    outcome->end = TurnEnd::kCancelled;
    outcome->stopped = "cancelled";
    parts_.interaction->ShowNotice(
        "Cancelled: the request stopped (its reserved tokens stay "
        "spent).");
    return conversation_.NoteForModel(
        "[Garuda: the person cancelled the model's answer.]");
  }
  outcome->end = TurnEnd::kFailed;
  outcome->stopped = absl::StrCat("model request failed: ", error.message());
  parts_.interaction->ShowNotice(outcome->stopped);
  return absl::OkStatus();
}

void TurnStops::CallsCancelled(TurnOutcome* outcome) {
  outcome->end = TurnEnd::kCancelled;
  outcome->stopped = "cancelled";
  parts_.interaction->ShowNotice("Cancelled.");
}

void TurnStops::StepLimit(TurnOutcome* outcome) {
  outcome->end = TurnEnd::kFailed;
  outcome->step_limit = true;
  outcome->stopped = absl::StrCat("the turn stopped after ", kMaxStepsPerTurn,
                                  " model requests");
  parts_.interaction->ShowNotice(outcome->stopped);
}

}  // namespace agent
}  // namespace garuda
