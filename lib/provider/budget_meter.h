// The model client's meter over garuda-budgeter's channel (lib/budget).
//
// Clamping: the first Reserve asks for the whole output limit; when that is
// refused, the refusal says what is left and a second Reserve asks for the
// output limit lowered to fit (at least ask.min_output). So a clamped
// request shows one refused grant in the budget journal before its grant.
// budget::Meter cannot be used for this: its refusal does not carry `left`.
#ifndef GARUDA_LIB_PROVIDER_BUDGET_METER_H_
#define GARUDA_LIB_PROVIDER_BUDGET_METER_H_

#include "lib/budget/meter.h"
#include "lib/provider/meter.h"

namespace garuda {
namespace provider {

class BudgetRequestMeter : public RequestMeter {
 public:
  // `client` must outlive the meter and every reservation it grants.
  explicit BudgetRequestMeter(budget::BudgetClient* client) : client_(client) {}

  absl::StatusOr<Grant> Reserve(const ReserveAsk& ask) override;

 private:
  budget::BudgetClient* client_;
};

// The budget's view of a provider's usage block.
budget::ProviderUsage ToBudgetUsage(const TokenUsage& usage);

}  // namespace provider
}  // namespace garuda

#endif  // GARUDA_LIB_PROVIDER_BUDGET_METER_H_
