// Constants shared by the budgeter and its clients.
#ifndef GARUDA_LIB_BUDGET_LIMITS_H_
#define GARUDA_LIB_BUDGET_LIMITS_H_

#include <cstdint>

namespace garuda {
namespace budget {

// No token count above this is accepted in a request or a journal record.
inline constexpr int64_t kMaxTokens = int64_t{1} << 50;
// Every sum of the ledger saturates here (far above any real count, far
// below int64's end), so no sequence of requests can make one wrap: spent
// never turns negative and nothing is granted past the limit because of a
// wrapped sum.
inline constexpr int64_t kMaxLedgerTokens = int64_t{1} << 62;

// a + b, held within [-kMaxLedgerTokens, kMaxLedgerTokens].
constexpr int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    return a > 0 ? kMaxLedgerTokens : -kMaxLedgerTokens;
  }
  if (sum > kMaxLedgerTokens) return kMaxLedgerTokens;
  if (sum < -kMaxLedgerTokens) return -kMaxLedgerTokens;
  return sum;
}

// The stop reason of a refused reservation or child, as in the spec.
inline constexpr char kTokenBudget[] = "token_budget";

}  // namespace budget
}  // namespace garuda

#endif  // GARUDA_LIB_BUDGET_LIMITS_H_
