#include "lib/agent/compaction.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/agent/request_estimate.h"
#include "lib/agent/tool_calls.h"
#include "lib/base/status_macros.h"
#include "lib/budget/limits.h"
#include "lib/budget/meter.h"
#include "lib/provider/budget_meter.h"
#include "lib/provider/wire.h"

namespace garuda {
namespace agent {
namespace {

constexpr char kSummaryHeader[] =
    "[Garuda: the earlier conversation was compacted; this is the model's "
    "summary of it.]\n";

}  // namespace

bool Compaction::Due(const provider::ModelRequest& next) const {
  return conversation_.messages().size() > 1 &&
         CompactionDue(parts_.model, context_window_,
                       InputEstimate(parts_.model, next));
}

absl::StatusOr<bool> Compaction::Run(provider::RequestMeter* meter,
                                     const CancelFlag* cancel,
                                     TurnOutcome* outcome) {
  if (conversation_.messages().empty()) {
    parts_.interaction->ShowNotice("Nothing to compact yet.");
    return false;
  }
  provider::ModelRequest request =
      requests_.Next(0, conversation_.messages().size());
  // Tools stay defined: the conversation holds calls and results, which
  // providers accept only with their definitions.
  provider::ChatMessage* last =
      request.mutable_messages(request.messages_size() - 1);
  if (last->role() == "user") {
    last->set_text(last->text().empty()
                       ? kSummaryNote
                       : absl::StrCat(last->text(), "\n\n", kSummaryNote));
  } else {
    provider::ChatMessage* note = request.add_messages();
    note->set_role("user");
    note->set_text(kSummaryNote);
  }
  const int64_t last_input_tokens = requests_.last_input_tokens();
  const int64_t previous =
      std::max(last_input_tokens, InputEstimate(parts_.model, request));
  request.set_max_tokens(budget::kCompactionOutputTokens);
  // The reservation is max(previous context, the whole summary input) +
  // 4096: the client takes the larger of this hint and the body's size.
  request.set_input_tokens_hint(
      std::max(last_input_tokens, request.input_tokens_hint()));
  request.set_purpose("compaction");
  request.set_request_id(absl::StrCat(request.request_id(), "-compaction"));
  parts_.interaction->ShowNotice(
      absl::StrCat("Compacting the conversation (about ", previous,
                   " tokens of context; the summary request reserves up to ",
                   budget::EstimateCompactionTokens(
                       last_input_tokens, previous * budget::kCharsPerToken),
                   " tokens)..."));
  provider::StreamCallbacks callbacks;
  absl::StatusOr<provider::ModelResponse> response =
      parts_.model->Send(request, meter, callbacks, cancel);
  if (!response.ok()) {
    TurnOutcome ignored;
    RETURN_IF_ERROR(stops_.FailedRequest(
        response.status(), request, outcome != nullptr ? outcome : &ignored));
    parts_.interaction->ShowNotice(
        "The conversation was not compacted (the summary request failed).");
    return false;
  }
  if (outcome != nullptr) requests_.Count(*response, &outcome->usage);
  if (response->text().empty()) {
    parts_.interaction->ShowNotice(
        "The conversation was not compacted: the model's summary was empty.");
    return false;
  }
  provider::ChatMessage summary;
  summary.set_role("user");
  summary.set_text(absl::StrCat(kSummaryHeader, response->text()));
  const size_t replaced = conversation_.messages().size();
  RETURN_IF_ERROR(conversation_.Compacted(std::move(summary), previous));
  // The next request is measured anew; until then the estimate is its size.
  requests_.ForgetMeasure();
  RETURN_IF_ERROR(parts_.audit->Record(
      MakeEvent("compaction", "", session_id_, "compacted",
                absl::StrCat(replaced, " messages, about ", previous,
                             " tokens, replaced by a summary of ",
                             response->text().size(), " characters"))));
  parts_.interaction->ShowNotice(
      absl::StrCat("Compacted: ", replaced, " messages replaced by a summary (",
                   response->text().size(), " characters)."));
  return true;
}

}  // namespace agent
}  // namespace garuda
