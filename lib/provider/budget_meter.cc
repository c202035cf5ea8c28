#include "lib/provider/budget_meter.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "lib/budget/limits.h"

namespace garuda {
namespace provider {
namespace {

class BudgetReservation : public Reservation {
 public:
  BudgetReservation(budget::BudgetClient* client, uint64_t id, int64_t tokens)
      : client_(client), id_(id), tokens_(tokens) {}

  ~BudgetReservation() override {
    // Never settled (the caller failed or was torn down): keep it spent.
    if (id_ != 0) client_->Settle(id_, 0, false).IgnoreError();
  }

  int64_t tokens() const override { return tokens_; }

  absl::StatusOr<int64_t> Settle(const TokenUsage& usage,
                                 bool usage_reported) override {
    if (id_ == 0) {
      return absl::FailedPreconditionError(
          "this reservation was already settled");
    }
    // The budget's own check of the usage counts too.
    std::optional<int64_t> used =
        usage_reported ? budget::ReportedTokens(ToBudgetUsage(usage))
                       : std::nullopt;
    const uint64_t id = std::exchange(id_, 0);
    absl::StatusOr<garuda::budget::Settled> settled =
        client_->Settle(id, used.value_or(0), used.has_value());
    if (!settled.ok()) return settled.status();
    return settled->charged();
  }

 private:
  budget::BudgetClient* client_;
  uint64_t id_;
  int64_t tokens_;
};

}  // namespace

budget::ProviderUsage ToBudgetUsage(const TokenUsage& usage) {
  budget::ProviderUsage out;
  if (usage.has_input_tokens()) out.input_tokens = usage.input_tokens();
  if (usage.has_output_tokens()) out.output_tokens = usage.output_tokens();
  if (usage.has_cache_read_tokens()) {
    out.cache_read_tokens = usage.cache_read_tokens();
  }
  if (usage.has_cache_write_tokens()) {
    out.cache_write_tokens = usage.cache_write_tokens();
  }
  return out;
}

absl::StatusOr<Grant> BudgetRequestMeter::Reserve(const ReserveAsk& ask) {
  const int64_t min_output = std::max<int64_t>(1, ask.min_output);
  const int64_t output = std::max(min_output, ask.output_limit);
  absl::StatusOr<garuda::budget::Reserved> reserved =
      client_->Reserve(ask.input_tokens + output, ask.purpose, ask.request_id);
  if (!reserved.ok()) return reserved.status();
  int64_t granted_output = output;
  if (!reserved->granted()) {
    const int64_t fits = reserved->left() - ask.input_tokens;
    if (fits >= min_output) {
      granted_output = std::min(output, fits);
      reserved = client_->Reserve(ask.input_tokens + granted_output,
                                  ask.purpose, ask.request_id);
      if (!reserved.ok()) return reserved.status();
    }
  }
  if (!reserved->granted()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        budget::kTokenBudget, ": the token budget has ", reserved->left(),
        " tokens left; this request needs at least ",
        ask.input_tokens + min_output, " (", ask.input_tokens,
        " input estimate + ", min_output, " output); no request was sent"));
  }
  Grant grant;
  grant.reservation = std::make_unique<BudgetReservation>(
      client_, reserved->reservation(), ask.input_tokens + granted_output);
  grant.output_limit = granted_output;
  return grant;
}

}  // namespace provider
}  // namespace garuda
