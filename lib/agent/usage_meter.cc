#include "lib/agent/usage_meter.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <utility>

namespace garuda {
namespace agent {

class CountedReservation : public provider::Reservation {
 public:
  CountedReservation(CountingMeter* meter,
                     std::unique_ptr<provider::Reservation> inner)
      : meter_(meter), inner_(std::move(inner)) {}

  ~CountedReservation() override {
    // Never settled: the budget keeps the whole reservation spent
    // (lib/provider/meter.h), so the count does too.
    if (!settled_) meter_->Charged(inner_->tokens(), false);
  }

  int64_t tokens() const override { return inner_->tokens(); }

  absl::StatusOr<int64_t> Settle(const provider::TokenUsage& usage,
                                 bool usage_reported) override {
    absl::StatusOr<int64_t> charge = inner_->Settle(usage, usage_reported);
    // A failed Settle leaves the reservation to its destructor's charge.
    if (charge.ok()) {
      settled_ = true;
      meter_->Charged(*charge, usage_reported);
    }
    return charge;
  }

 private:
  CountingMeter* meter_;
  std::unique_ptr<provider::Reservation> inner_;
  bool settled_ = false;
};

absl::StatusOr<provider::Grant> CountingMeter::Reserve(
    const provider::ReserveAsk& ask) {
  absl::StatusOr<provider::Grant> grant = inner_->Reserve(ask);
  if (!grant.ok()) return grant;
  ++attempts_;
  last_reserved_ = grant->reservation->tokens();
  grant->reservation = std::make_unique<CountedReservation>(
      this, std::move(grant->reservation));
  return grant;
}

void CountingMeter::Charged(int64_t tokens, bool reported) {
  charged_ += tokens;
  if (!reported) all_reported_ = false;
}

uint32_t AddCount(uint32_t count, int64_t more) {
  constexpr int64_t kMax = std::numeric_limits<uint32_t>::max();
  const int64_t sum = static_cast<int64_t>(count) + std::max<int64_t>(more, 0);
  return static_cast<uint32_t>(std::min(sum, kMax));
}

void AddUsage(const UsageReport& more, UsageReport* total) {
  if (more.requests() == 0 && more.charged_tokens() == 0) return;
  const bool reported = total->requests() == 0
                            ? more.usage_reported()
                            : total->usage_reported() && more.usage_reported();
  total->set_input_tokens(AddCount(total->input_tokens(), more.input_tokens()));
  total->set_output_tokens(
      AddCount(total->output_tokens(), more.output_tokens()));
  total->set_charged_tokens(
      AddCount(total->charged_tokens(), more.charged_tokens()));
  total->set_requests(AddCount(total->requests(), more.requests()));
  total->set_usage_reported(reported);
}

void CountingMeter::Fill(UsageReport* usage) const {
  usage->set_requests(attempts_);
  // The report's counts are 32-bit so that JSON prints them as numbers; a
  // turn near 4 billion tokens shows the largest count rather than wrapping.
  constexpr int64_t kMax = std::numeric_limits<uint32_t>::max();
  usage->set_charged_tokens(
      static_cast<uint32_t>(charged_ > kMax ? kMax : charged_));
  usage->set_usage_reported(all_reported());
}

}  // namespace agent
}  // namespace garuda
