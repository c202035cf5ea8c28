#include "lib/budget/meter.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace budget {

int64_t TokensForChars(int64_t chars) {
  if (chars <= 0) return 0;
  return (chars + kCharsPerToken - 1) / kCharsPerToken;
}

int64_t EstimateRequestTokens(const RequestShape& shape) {
  const int64_t whole =
      TokensForChars(shape.system_prompt_chars + shape.message_chars +
                     shape.tool_definition_chars + shape.other_chars);
  const int64_t measured = shape.last_measured_input_tokens +
                           TokensForChars(shape.new_message_chars);
  return std::max(whole, measured) + std::max<int64_t>(0, shape.output_limit);
}

int64_t EstimateFloorTokens(const FloorShape& shape) {
  const int64_t next = std::max(
      shape.last_reservation, shape.current_input_tokens + shape.output_limit);
  // Each pending result can come back at its cap with every character
  // escaped, wrapped in its message.
  const int64_t per_tool =
      TokensForChars(kToolResultCapChars * kJsonEscapeFactor +
                     shape.empty_result_message_chars);
  const int64_t per_subagent =
      shape.answer_reserve_tokens > 0
          ? shape.answer_reserve_tokens
          : TokensForChars(kSubagentResultCapChars * kJsonEscapeFactor +
                           shape.empty_result_message_chars);
  return next + shape.pending_tool_results * per_tool +
         shape.pending_subagent_results * per_subagent +
         shape.compaction_tokens;
}

int64_t AnswerReserveTokens(int64_t cap, int64_t children) {
  const int64_t share =
      std::max<int64_t>(0, cap) / 10 / std::max<int64_t>(1, children);
  return std::clamp(share, kMinAnswerTokens, kMaxAnswerTokens);
}

int64_t EstimateCompactionTokens(int64_t previous_context_tokens,
                                 int64_t summary_input_chars) {
  return std::max(previous_context_tokens,
                  TokensForChars(summary_input_chars)) +
         kCompactionOutputTokens;
}

std::optional<int64_t> ReportedTokens(const ProviderUsage& usage) {
  if (!usage.input_tokens || !usage.output_tokens) return std::nullopt;
  int64_t total = 0;
  for (const std::optional<int64_t>& part :
       {usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
        usage.cache_write_tokens}) {
    if (!part) continue;
    if (*part < 0 || *part > kMaxTokens) return std::nullopt;
    total += *part;
  }
  return total;
}

MeteredCall::MeteredCall(BudgetClient* client, uint64_t reservation,
                         int64_t tokens, std::string purpose,
                         std::string request_id)
    : client_(client),
      reservation_(reservation),
      tokens_(tokens),
      purpose_(std::move(purpose)),
      request_id_(std::move(request_id)) {}

MeteredCall::MeteredCall(MeteredCall&& other) noexcept
    : client_(other.client_),
      reservation_(std::exchange(other.reservation_, 0)),
      tokens_(other.tokens_),
      purpose_(std::move(other.purpose_)),
      request_id_(std::move(other.request_id_)),
      attempts_(other.attempts_) {}

MeteredCall& MeteredCall::operator=(MeteredCall&& other) noexcept {
  if (this != &other) {
    if (open()) Cancel().IgnoreError();
    client_ = other.client_;
    reservation_ = std::exchange(other.reservation_, 0);
    tokens_ = other.tokens_;
    purpose_ = std::move(other.purpose_);
    request_id_ = std::move(other.request_id_);
    attempts_ = other.attempts_;
  }
  return *this;
}

MeteredCall::~MeteredCall() {
  // Cancelled: the provider may have billed it, so it stays spent. If the
  // budgeter is gone the open reservation is charged at the next resume.
  if (open()) Cancel().IgnoreError();
}

absl::Status MeteredCall::Finish(int64_t used, bool reported) {
  if (!open()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "request ", request_id_, " has no open reservation to settle"));
  }
  const uint64_t reservation = std::exchange(reservation_, 0);
  return client_->Settle(reservation, used, reported).status();
}

absl::Status MeteredCall::Settle(const ProviderUsage& usage) {
  std::optional<int64_t> used = ReportedTokens(usage);
  return Finish(used.value_or(0), used.has_value());
}

absl::Status MeteredCall::SettleUnreported() { return Finish(0, false); }

absl::Status MeteredCall::Retry(const ProviderUsage& usage) {
  RETURN_IF_ERROR(Settle(usage));
  ++attempts_;
  ASSIGN_OR_RETURN(Reserved reserved,
                   client_->Reserve(tokens_, "retry",
                                    absl::StrCat(request_id_, "#", attempts_)));
  if (!reserved.granted()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        kTokenBudget, ": retry ", attempts_, " of ", request_id_, " needs ",
        tokens_, " tokens, ", reserved.left(), " left"));
  }
  reservation_ = reserved.reservation();
  return absl::OkStatus();
}

absl::StatusOr<MeteredCall> Meter::Begin(int64_t tokens,
                                         const std::string& purpose,
                                         const std::string& request_id) {
  ASSIGN_OR_RETURN(Reserved reserved,
                   client_->Reserve(tokens, purpose, request_id));
  if (!reserved.granted()) {
    return absl::ResourceExhaustedError(
        absl::StrCat(kTokenBudget, ": ", purpose, " request ", request_id,
                     " needs ", tokens, " tokens, ", reserved.left(), " left"));
  }
  return MeteredCall(client_, reserved.reservation(), tokens, purpose,
                     request_id);
}

}  // namespace budget
}  // namespace garuda
