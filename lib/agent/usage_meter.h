// The turn's usage as the budget saw it: a RequestMeter in front of the
// budgeter's that adds up every attempt's charge, the failed and cancelled
// ones included, so a one-shot report agrees with `garuda-budgeter status`.
#ifndef GARUDA_LIB_AGENT_USAGE_METER_H_
#define GARUDA_LIB_AGENT_USAGE_METER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "lib/provider/meter.h"
#include "proto/agent_report.pb.h"

namespace garuda {
namespace agent {

// Adds to a 32-bit report count (proto/agent_report.proto), stopping at its
// largest value rather than wrapping.
uint32_t AddCount(uint32_t count, int64_t more);
// Adds `more` (a child's usage) to `total`: counts added, usage_reported
// true only when both were (a `more` with no request leaves it).
void AddUsage(const UsageReport& more, UsageReport* total);

class CountingMeter : public provider::RequestMeter {
 public:
  // `inner` must outlive this meter and every reservation it grants.
  explicit CountingMeter(provider::RequestMeter* inner) : inner_(inner) {}

  absl::StatusOr<provider::Grant> Reserve(
      const provider::ReserveAsk& ask) override;

  // Attempts granted (sent or about to be), tokens charged so far, and
  // whether every settled attempt came with its usage. No attempt: false,
  // since nothing was reported.
  uint32_t attempts() const { return attempts_; }
  int64_t charged() const { return charged_; }
  bool all_reported() const { return attempts_ > 0 && all_reported_; }
  // The tokens of the last granted reservation (0 before any).
  int64_t last_reserved() const { return last_reserved_; }

  // Copies the three into `usage` (requests, charged_tokens,
  // usage_reported); token counts from the answers stay the caller's.
  void Fill(UsageReport* usage) const;

 private:
  friend class CountedReservation;
  void Charged(int64_t tokens, bool reported);

  provider::RequestMeter* inner_;
  uint32_t attempts_ = 0;
  int64_t charged_ = 0;
  bool all_reported_ = true;
  int64_t last_reserved_ = 0;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_USAGE_METER_H_
