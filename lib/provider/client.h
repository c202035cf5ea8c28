// A model request, metered and retried: the one way the agent talks to a
// model provider (OpenAI-compatible Chat Completions or Anthropic Messages,
// both streamed).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<ModelClient> client,
//                    ModelClient::Create(options));
//   BudgetRequestMeter meter(&budget_client);
//   absl::StatusOr<ModelResponse> response =
//       client->Send(request, &meter, callbacks, &cancel);
//
// Each attempt reserves (the output limit lowered to fit what is left),
// then settles: to the reported usage when it is complete and valid, else
// the whole reservation stays charged. A 429, a 529 or another overloaded
// answer, a 5xx, a network error or an error inside a 200 stream is retried
// after a backoff (Retry-After honoured), and each retry reserves again.
#ifndef GARUDA_LIB_PROVIDER_CLIENT_H_
#define GARUDA_LIB_PROVIDER_CLIENT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/provider/api_key.h"
#include "lib/provider/http.h"
#include "lib/provider/meter.h"
#include "lib/provider/wire.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace provider {

struct RetryPolicy {
  int max_attempts = 4;  // the first attempt and three retries
  // The wait before retry n is initial_backoff * 2^(n-1), at most
  // max_backoff, unless the server said otherwise (Retry-After or
  // retry-after-ms), which is honoured up to max_retry_after.
  absl::Duration initial_backoff = absl::Seconds(1);
  absl::Duration max_backoff = absl::Seconds(30);
  absl::Duration max_retry_after = absl::Seconds(120);
};

// Waits `delay`, ending early when `cancel` is set. Tests put in one that
// records the delay and returns at once.
using Sleeper =
    std::function<void(absl::Duration delay, const CancelFlag* cancel)>;
void SleepUnlessCancelled(absl::Duration delay, const CancelFlag* cancel);

struct ClientOptions {
  std::string provider;  // "openai" or "anthropic"
  std::string model;
  std::string base_url;
  uint32_t max_tokens = 4096;
  // A request is refused (token_budget) rather than sent with fewer output
  // tokens than this.
  uint32_t min_output_tokens = 256;
  ApiKey api_key;
  RetryPolicy retry;
  HttpOptions http;
  Sleeper sleep = SleepUnlessCancelled;
};

struct RetryNotice {
  int next_attempt = 0;  // 2 for the first retry
  std::string reason;    // e.g. "HTTP 429: rate_limit_error: ..."
  absl::Duration delay;
};

struct StreamCallbacks {
  // Text as it arrives. After a retry notice, the text of the failed attempt
  // is void: the next attempt streams the answer again.
  std::function<void(absl::string_view text)> on_text;
  std::function<void(const RetryNotice& notice)> on_retry;
};

// One Send at a time per client (a session sends its requests in turn).
class ModelClient {
 public:
  // Checks the options (provider, model, base URL).
  static absl::StatusOr<std::unique_ptr<ModelClient>> Create(
      ClientOptions options);

  // Sends `request` and streams the answer. `meter` must not be null:
  // no request goes out without a reservation. Errors:
  //   RESOURCE_EXHAUSTED "token_budget: ..."  a reservation was refused
  //                                           (first attempt or a retry);
  //   CANCELLED                               `cancel` was set; the
  //                                           attempt's reservation stays
  //                                           spent unless a usage came;
  //   UNAVAILABLE                             retries ran out;
  //   others                                  the provider refused the
  //                                           request (HTTP 4xx) or sent
  //                                           what cannot be read.
  // No message ever holds the API key.
  absl::StatusOr<ModelResponse> Send(const ModelRequest& request,
                                     RequestMeter* meter,
                                     const StreamCallbacks& callbacks,
                                     const CancelFlag* cancel);

  const ClientOptions& options() const { return options_; }
  // "<provider> <model> at <base URL>", for a session's first line.
  std::string Describe() const;

 private:
  ModelClient(ClientOptions options, std::unique_ptr<WireFormat> wire)
      : options_(std::move(options)), wire_(std::move(wire)) {}

  ClientOptions options_;
  std::unique_ptr<WireFormat> wire_;
  uint64_t next_request_ = 1;
};

// The wait before the next attempt: the server's Retry-After or
// retry-after-ms when sent (capped), else the exponential backoff.
absl::Duration RetryDelay(const RetryPolicy& policy, int failed_attempts,
                          absl::string_view retry_after,
                          absl::string_view retry_after_ms, absl::Time now);

// A URL as shown in messages: no user name or password, no query.
std::string UrlForMessages(absl::string_view url);

}  // namespace provider
}  // namespace garuda

#endif  // GARUDA_LIB_PROVIDER_CLIENT_H_
