// Constants shared by the budgeter and its clients.
#ifndef GARUDA_LIB_BUDGET_LIMITS_H_
#define GARUDA_LIB_BUDGET_LIMITS_H_

#include <cstdint>

namespace garuda {
namespace budget {

// No token count above this is accepted (keeps every sum far from overflow).
inline constexpr int64_t kMaxTokens = int64_t{1} << 50;
// The stop reason of a refused reservation or child, as in the spec.
inline constexpr char kTokenBudget[] = "token_budget";

}  // namespace budget
}  // namespace garuda

#endif  // GARUDA_LIB_BUDGET_LIMITS_H_
