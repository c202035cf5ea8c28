// Compaction (/compact, and automatic before a request that would pass
// model.contextWindow): the conversation is replaced by the model's summary
// of it. The summary request is reserved like every other (spec T9's
// repair): max(previous context, the summary request's whole input, its
// system prompt included) + 4096, and it is journaled, so --resume
// continues from the summary.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/agent/request_estimate.h"
#include "lib/agent/session.h"
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

absl::StatusOr<bool> Session::Compact(provider::RequestMeter* meter,
                                      const CancelFlag* cancel,
                                      TurnOutcome* outcome) {
  if (conversation_.messages().empty()) {
    parts_.interaction->ShowNotice("Nothing to compact yet.");
    return false;
  }
  provider::ModelRequest request =
      NextRequest(Tools(), 0, conversation_.messages().size());
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
  const int64_t previous =
      std::max(last_input_tokens_, InputEstimate(parts_.model, request));
  request.set_max_tokens(budget::kCompactionOutputTokens);
  // The reservation is max(previous context, the whole summary input) +
  // 4096: the client takes the larger of this hint and the body's size.
  request.set_input_tokens_hint(
      std::max(last_input_tokens_, request.input_tokens_hint()));
  request.set_purpose("compaction");
  request.set_request_id(absl::StrCat(request.request_id(), "-compaction"));
  parts_.interaction->ShowNotice(
      absl::StrCat("Compacting the conversation (about ", previous,
                   " tokens of context; the summary request reserves up to ",
                   budget::EstimateCompactionTokens(
                       last_input_tokens_, previous * budget::kCharsPerToken),
                   " tokens)..."));
  provider::StreamCallbacks callbacks;
  absl::StatusOr<provider::ModelResponse> response =
      parts_.model->Send(request, meter, callbacks, cancel);
  if (!response.ok()) {
    TurnOutcome ignored;
    RETURN_IF_ERROR(StopForFailedRequest(
        response.status(), request, outcome != nullptr ? outcome : &ignored));
    parts_.interaction->ShowNotice(
        "The conversation was not compacted (the summary request failed).");
    return false;
  }
  if (outcome != nullptr) CountUsage(*response, &outcome->usage);
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
  last_input_tokens_ = 0;
  RETURN_IF_ERROR(parts_.audit->Record(
      MakeEvent("compaction", "", config_.session_id, "compacted",
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
