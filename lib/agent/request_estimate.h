// What a model request will cost before it is sent: its body as the model
// client sends it, the input estimate the client reserves for, and whether a
// compaction is due before it (and what the summary request would reserve).
// The session's turn, its children's floors and compaction ask these.
#ifndef GARUDA_LIB_AGENT_REQUEST_ESTIMATE_H_
#define GARUDA_LIB_AGENT_REQUEST_ESTIMATE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/provider/client.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

// The note the summary request ends with (its size is part of the
// reservation).
inline constexpr char kSummaryNote[] =
    "[Garuda: the conversation is about to be compacted: it will be replaced "
    "by your answer to this message. Write a summary that lets you continue "
    "the work without it: the person's requests, what was done and found "
    "(files, commands, results), decisions, and what is left to do. No tool "
    "calls.]";

// `request` as `model` would send it (its wire format); FAILED_PRECONDITION
// without a model.
absl::StatusOr<std::string> RequestBody(const provider::ModelClient* model,
                                        const provider::ModelRequest& request);

// How many characters `text` takes as a tool result's content in a request
// body of `model` (after JSON escaping): the body with it less the body
// with an empty result. Its size in bytes without a model.
int64_t CarriedChars(const provider::ModelClient* model, absl::string_view text,
                     bool is_error);

// The input estimate of `request`, as the model client makes it.
int64_t InputEstimate(const provider::ModelClient* model,
                      const provider::ModelRequest& request);

// A request of `next_input_tokens` plus the output limit would pass
// model.contextWindow (`context_window`).
bool CompactionDue(const provider::ModelClient* model, int64_t context_window,
                   int64_t next_input_tokens);

// The summary request's reservation when a compaction is due before a
// request of `next_input_tokens`; else 0.
int64_t CompactionReserveIfDue(const provider::ModelClient* model,
                               int64_t context_window,
                               int64_t last_input_tokens,
                               int64_t next_input_tokens);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_REQUEST_ESTIMATE_H_
