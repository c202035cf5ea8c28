// The metering hook of the model client (spec T9): every attempt of a model
// request reserves before it is sent and settles after it ends. The session
// plugs in garuda-budgeter through BudgetRequestMeter (budget_meter.h).
#ifndef GARUDA_LIB_PROVIDER_METER_H_
#define GARUDA_LIB_PROVIDER_METER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace provider {

// One attempt's reservation. Destroyed without Settle (a crash, a lost
// budgeter), it stays spent.
class Reservation {
 public:
  virtual ~Reservation() = default;
  virtual int64_t tokens() const = 0;
  // Ends the attempt. With usage_reported the charge becomes the usage's
  // total; without, the whole reservation stays charged (also for a failed
  // or cancelled attempt). Returns the charge.
  virtual absl::StatusOr<int64_t> Settle(const TokenUsage& usage,
                                         bool usage_reported) = 0;
};

struct ReserveAsk {
  int64_t input_tokens = 0;
  // The output limit wanted, and the least that is still worth sending.
  int64_t output_limit = 0;
  int64_t min_output = 1;
  std::string purpose;  // "turn" for a first attempt, "retry" after
  std::string request_id;
};

struct Grant {
  std::unique_ptr<Reservation> reservation;
  // Between ask.min_output and ask.output_limit: lowered so that
  // input_tokens + output_limit fits what is left.
  int64_t output_limit = 0;
};

class RequestMeter {
 public:
  virtual ~RequestMeter() = default;
  // Not even input_tokens + min_output fits: RESOURCE_EXHAUSTED whose
  // message starts with "token_budget" and says what is left; the request
  // must not be sent.
  virtual absl::StatusOr<Grant> Reserve(const ReserveAsk& ask) = 0;
};

}  // namespace provider
}  // namespace garuda

#endif  // GARUDA_LIB_PROVIDER_METER_H_
