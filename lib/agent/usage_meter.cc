#include "lib/agent/usage_meter.h"

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
  grant->reservation = std::make_unique<CountedReservation>(
      this, std::move(grant->reservation));
  return grant;
}

void CountingMeter::Charged(int64_t tokens, bool reported) {
  charged_ += tokens;
  if (!reported) all_reported_ = false;
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
