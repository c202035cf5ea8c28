// The client of garuda-budgeter that every model request goes through:
// reserve before the request, settle after it (spec T9).
//
//   ASSIGN_OR_RETURN(MeteredCall call,
//                    meter.Begin(EstimateRequestTokens(shape), "turn", id));
//   ... send the request ...
//   call.Settle(usage);            // reported usage, also a cut-off stream
//   call.SettleUnreported();       // failed / timed out with no usage
//   call.Retry();                  // the attempt ends, a new one reserves
//   (destroyed unsettled = cancelled: the reservation stays spent)
//
// A budgeter that has died is noticed by the next call at once (its socket is
// closed by the kernel; the top agent also watches its process), and from then
// on every Begin() fails: no request goes out unmetered.
#ifndef GARUDA_LIB_BUDGET_METER_H_
#define GARUDA_LIB_BUDGET_METER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"
#include "lib/budget/client.h"
#include "lib/budget/limits.h"
#include "lib/ipc/channel.h"
#include "lib/ipc/helper_process.h"
#include "proto/budgeter_service.pb.h"

namespace garuda {
namespace budget {

// ---- The spec's estimates ----

// About 4 characters per token; bytes are counted, which overestimates
// non-ASCII text (the safe side).
inline constexpr int64_t kCharsPerToken = 4;
// A tool result's worst case in JSON: every character escaped as \u00XX.
inline constexpr int64_t kJsonEscapeFactor = 6;
// Result caps (characters): a tool result, a subagent's answer.
inline constexpr int64_t kToolResultCapChars = 100000;
inline constexpr int64_t kSubagentResultCapChars = 20000;

// ceil(chars / 4).
int64_t TokensForChars(int64_t chars);

// The whole request as sent: system prompt, conversation, client and server
// tool definitions, thinking settings and anything else in the body.
struct RequestShape {
  int64_t system_prompt_chars = 0;
  int64_t message_chars = 0;
  int64_t tool_definition_chars = 0;
  int64_t other_chars = 0;
  int64_t output_limit = 0;  // max_tokens of the request
  // The provider's input count of the previous request, and the characters
  // added since; the input estimate is the larger of the two ways.
  int64_t last_measured_input_tokens = 0;
  int64_t new_message_chars = 0;
};
// The reservation for a request: the input estimate plus the output limit.
int64_t EstimateRequestTokens(const RequestShape& shape);

// The bound of the parent's next (final) request, reserved as its floor.
struct FloorShape {
  int64_t last_reservation = 0;      // the last request's reservation
  int64_t current_input_tokens = 0;  // the current request's input estimate
  int64_t output_limit = 0;
  int64_t pending_tool_results = 0;      // each up to kToolResultCapChars
  int64_t pending_subagent_results = 0;  // each up to kSubagentResultCapChars
  // What the parent keeps for each pending child answer
  // (AnswerReserveTokens): the answer is cut to fit it as carried, so this
  // bound is exact. 0: the worst case, kSubagentResultCapChars with every
  // character escaped (the rule before issue 28; benchmarks compare it).
  int64_t answer_reserve_tokens = 0;
  // The message around one empty result (role, ids, field names), measured
  // from the provider format.
  int64_t empty_result_message_chars = 0;
  // A compaction due before the next request reserves its summary request.
  int64_t compaction_tokens = 0;
};
// max(last reservation, input + output limit) + a bound per pending result
// (answer_reserve_tokens per child answer, else the worst case) +
// compaction.
int64_t EstimateFloorTokens(const FloorShape& shape);

// The part of a parent's next request kept for one child's answer, the
// answer's result message included, when `children` children answer in one
// batch and the parent can spend `cap` tokens: a tenth of the cap shared by
// the batch's answers, never below kMinAnswerTokens (about 2000 characters,
// a page of findings) nor above kMaxAnswerTokens (the 20 000-character
// answer cap). docs/budget.md says why.
inline constexpr int64_t kMinAnswerTokens = 512;
inline constexpr int64_t kMaxAnswerTokens = 5120;
int64_t AnswerReserveTokens(int64_t cap, int64_t children);

// A compaction (also /compact) reserves its summary request:
// max(previous context, the summary request's whole input, its system prompt
// included) + kCompactionOutputTokens.
inline constexpr int64_t kCompactionOutputTokens = 4096;
int64_t EstimateCompactionTokens(int64_t previous_context_tokens,
                                 int64_t summary_input_chars);

// A provider's usage block. Missing, partial or invalid usage does not count:
// the whole reservation stays charged.
struct ProviderUsage {
  std::optional<int64_t> input_tokens;
  std::optional<int64_t> output_tokens;
  std::optional<int64_t> cache_read_tokens;
  std::optional<int64_t> cache_write_tokens;
};
// The tokens of a complete usage (input and output present, none negative),
// else nothing.
std::optional<int64_t> ReportedTokens(const ProviderUsage& usage);

class Meter;

// One model request's reservation. Move-only; destroyed unsettled it is
// cancelled: the reservation stays spent.
class MeteredCall {
 public:
  MeteredCall(MeteredCall&& other) noexcept;
  MeteredCall& operator=(MeteredCall&& other) noexcept;
  ~MeteredCall();

  // The provider reported `usage` (a full response, or a failed or cut-off
  // one that still reported): settles to it when it is complete, else keeps
  // the whole reservation (usage_reported false).
  absl::Status Settle(const ProviderUsage& usage);
  // Failed, timed out or cancelled with no usage: the reservation is spent.
  absl::Status SettleUnreported();
  absl::Status Cancel() { return SettleUnreported(); }
  // The attempt failed and is retried: it ends with `usage` if the provider
  // reported one (else it stays spent), and the retry reserves the same
  // tokens again. Refused: RESOURCE_EXHAUSTED token_budget.
  absl::Status Retry(const ProviderUsage& usage = {});

  uint64_t reservation() const { return reservation_; }
  int64_t tokens() const { return tokens_; }
  bool open() const { return reservation_ != 0; }

 private:
  friend class Meter;
  MeteredCall(BudgetClient* client, uint64_t reservation, int64_t tokens,
              std::string purpose, std::string request_id);
  absl::Status Finish(int64_t used, bool reported);

  BudgetClient* client_ = nullptr;
  uint64_t reservation_ = 0;
  int64_t tokens_ = 0;
  std::string purpose_;
  std::string request_id_;
  int attempts_ = 1;
};

class Meter {
 public:
  explicit Meter(BudgetClient* client) : client_(client) {}
  // Reserves `tokens` for a request. Refused: RESOURCE_EXHAUSTED whose
  // message starts with "token_budget" and says what is left. The budgeter
  // gone: UNAVAILABLE. Either way the request must not be sent.
  absl::StatusOr<MeteredCall> Begin(int64_t tokens, const std::string& purpose,
                                    const std::string& request_id);

 private:
  BudgetClient* client_;
};

}  // namespace budget
}  // namespace garuda

#endif  // GARUDA_LIB_BUDGET_METER_H_
