#include "lib/provider/client.h"

#include <time.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "lib/base/status_macros.h"
#include "lib/budget/meter.h"
#include "lib/provider/sse.h"

namespace garuda {
namespace provider {
namespace {

constexpr char kOpenAiBaseUrl[] = "https://api.openai.com/v1";
constexpr char kAnthropicBaseUrl[] = "https://api.anthropic.com";

// The host part of an http(s) URL, without user info or port.
std::string UrlHost(absl::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme != absl::string_view::npos) url.remove_prefix(scheme + 3);
  url = url.substr(0, url.find_first_of("/?#"));
  const size_t at = url.rfind('@');
  if (at != absl::string_view::npos) url.remove_prefix(at + 1);
  if (absl::StartsWith(url, "["))
    return std::string(url.substr(0, url.find(']') + 1));
  return std::string(url.substr(0, url.find(':')));
}

bool IsLoopbackHost(absl::string_view host) {
  return host == "localhost" || host == "[::1]" ||
         absl::StartsWith(host, "127.");
}

bool IsRetryableStatus(long status) {
  // 429 rate limited; 529 Anthropic overloaded; 408 and 5xx gateway and
  // server trouble (vLLM and proxies answer 503 when overloaded).
  return status == 408 || status == 429 || status == 500 || status == 502 ||
         status == 503 || status == 504 || status == 529;
}

absl::StatusCode CodeForStatus(long status) {
  switch (status) {
    case 400:
    case 413:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    default:
      return absl::StatusCode::kFailedPrecondition;
  }
}

// Why an attempt failed, and whether another attempt may succeed.
struct Failure {
  bool retryable = false;
  absl::StatusCode code = absl::StatusCode::kUnavailable;
  std::string reason;
};

Failure Classify(const HttpOutcome& outcome, const StreamDecoder& decoder) {
  Failure failure;
  if (decoder.stream_error().has_value()) {
    const StreamError& error = *decoder.stream_error();
    failure.retryable = true;
    failure.reason =
        absl::StrCat("error in the stream after HTTP 200: ",
                     error.type.empty() ? "" : absl::StrCat(error.type, ": "),
                     error.message);
    return failure;
  }
  if (outcome.kind == HttpOutcome::Kind::kHandlerStopped) {
    // The server sent something that is not its stream format.
    failure.code = absl::StatusCode::kDataLoss;
    failure.reason =
        absl::StrCat("unreadable stream: ", outcome.handler_error.message());
    return failure;
  }
  if (outcome.status_code == 0) {
    failure.retryable = true;
    failure.reason = absl::StrCat("network error: ", outcome.network_error);
    return failure;
  }
  if (outcome.status_code != 200) {
    failure.retryable = IsRetryableStatus(outcome.status_code);
    failure.code = CodeForStatus(outcome.status_code);
    failure.reason = absl::StrCat("HTTP ", outcome.status_code, ": ",
                                  ErrorBodyMessage(outcome.error_body));
    return failure;
  }
  if (!absl::StartsWithIgnoreCase(outcome.content_type, "text/event-stream")) {
    failure.code = absl::StatusCode::kFailedPrecondition;
    failure.reason =
        absl::StrCat("HTTP 200 with Content-Type \"", outcome.content_type,
                     "\" instead of an event stream; does the server support "
                     "\"stream\": true?");
    return failure;
  }
  failure.retryable = true;
  failure.reason =
      outcome.kind == HttpOutcome::Kind::kNetworkError
          ? absl::StrCat("the stream broke off: ", outcome.network_error)
          : "the stream ended before the answer did";
  return failure;
}

}  // namespace

void SleepUnlessCancelled(absl::Duration delay, const CancelFlag* cancel) {
  const absl::Time end = absl::Now() + delay;
  // Short naps, so that a cancel (also from a signal handler) ends the wait
  // soon without any lock.
  while (cancel == nullptr || !cancel->cancelled()) {
    const absl::Duration left = end - absl::Now();
    if (left <= absl::ZeroDuration()) return;
    absl::SleepFor(std::min(left, absl::Milliseconds(50)));
  }
}

absl::Duration RetryDelay(const RetryPolicy& policy, int failed_attempts,
                          absl::string_view retry_after,
                          absl::string_view retry_after_ms, absl::Time now) {
  std::optional<absl::Duration> asked;
  double number = 0;
  if (!retry_after_ms.empty() && absl::SimpleAtod(retry_after_ms, &number) &&
      number >= 0) {
    asked = absl::Milliseconds(number);
  } else if (!retry_after.empty()) {
    if (absl::SimpleAtod(retry_after, &number) && number >= 0) {
      asked = absl::Seconds(number);
    } else {
      // An HTTP date: "Wed, 21 Oct 2015 07:28:00 GMT".
      absl::Time when;
      std::string error;
      if (absl::ParseTime("%a, %d %b %Y %H:%M:%S GMT", std::string(retry_after),
                          &when, &error)) {
        asked = std::max(absl::ZeroDuration(), when - now);
      }
    }
  }
  if (asked.has_value()) return std::min(*asked, policy.max_retry_after);
  absl::Duration delay = policy.initial_backoff;
  for (int i = 1; i < failed_attempts && delay < policy.max_backoff; ++i) {
    delay *= 2;
  }
  return std::min(delay, policy.max_backoff);
}

std::string UrlForMessages(absl::string_view url) {
  url = url.substr(0, url.find_first_of("?#"));
  const size_t scheme = url.find("://");
  if (scheme == absl::string_view::npos) return std::string(url);
  const size_t authority = scheme + 3;
  const size_t path = url.find('/', authority);
  const size_t at = url.substr(0, path).rfind('@');
  if (at == absl::string_view::npos || at < authority) return std::string(url);
  return absl::StrCat(url.substr(0, authority), url.substr(at + 1));
}

absl::StatusOr<std::unique_ptr<ModelClient>> ModelClient::Create(
    ClientOptions options) {
  std::unique_ptr<WireFormat> wire;
  if (options.provider == "openai") {
    wire = OpenAiWireFormat();
    if (options.base_url.empty()) options.base_url = kOpenAiBaseUrl;
  } else if (options.provider == "anthropic") {
    wire = AnthropicWireFormat();
    if (options.base_url.empty()) options.base_url = kAnthropicBaseUrl;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.provider is \"", options.provider,
        "\"; use \"openai\" (also for llama.cpp, vLLM and Ollama) or "
        "\"anthropic\""));
  }
  if (options.model.empty()) {
    return absl::InvalidArgumentError(
        "model.name is not set: name the model to ask (e.g. \"gpt-4.1\", "
        "\"claude-sonnet-4-5\", or the model a local server loaded)");
  }
  const std::string lower = absl::AsciiStrToLower(options.base_url);
  const bool https = absl::StartsWith(lower, "https://");
  if (!https && !absl::StartsWith(lower, "http://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("model.baseUrl \"", UrlForMessages(options.base_url),
                     "\" is not an http:// or https:// URL"));
  }
  if (!https && !options.api_key.empty() && !IsLoopbackHost(UrlHost(lower))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.baseUrl \"", UrlForMessages(options.base_url),
        "\" is plain http to another machine: the API key would travel "
        "unencrypted; use https, or unset the key for a local server"));
  }
  if (options.max_tokens == 0) {
    return absl::InvalidArgumentError("model.maxTokens must be at least 1");
  }
  if (options.retry.max_attempts < 1) options.retry.max_attempts = 1;
  if (!options.sleep) options.sleep = SleepUnlessCancelled;
  return std::unique_ptr<ModelClient>(
      new ModelClient(std::move(options), std::move(wire)));
}

std::string ModelClient::Describe() const {
  return absl::StrCat(wire_->provider(), " ", options_.model, " at ",
                      UrlForMessages(options_.base_url));
}

absl::StatusOr<ModelResponse> ModelClient::Send(
    const ModelRequest& request, RequestMeter* meter,
    const StreamCallbacks& callbacks, const CancelFlag* cancel) {
  if (meter == nullptr) {
    return absl::FailedPreconditionError(
        "no meter: a model request is never sent without a reservation");
  }
  const ApiKey& key = options_.api_key;
  const std::string endpoint = wire_->Endpoint(options_.base_url);
  const std::string where =
      absl::StrCat(wire_->provider(), " ", UrlForMessages(endpoint));
  auto error = [&](absl::StatusCode code, absl::string_view message) {
    return absl::Status(code, key.Redact(absl::StrCat(where, ": ", message)));
  };

  const std::string request_id = request.request_id().empty()
                                     ? absl::StrCat("request-", next_request_++)
                                     : request.request_id();
  const uint32_t wanted =
      request.max_tokens() != 0 ? request.max_tokens() : options_.max_tokens;
  // Built once before any reservation: a request that cannot be sent fails
  // here, and its size is the input estimate (4 characters a token, over
  // the whole body), or the caller's own estimate when that is larger.
  absl::StatusOr<std::string> full_body =
      wire_->Body(request, options_.model, wanted);
  if (!full_body.ok()) {
    return error(full_body.status().code(), full_body.status().message());
  }
  const int64_t input_tokens =
      std::max(budget::TokensForChars(static_cast<int64_t>(full_body->size())),
               request.input_tokens_hint());

  int64_t charged = 0;
  for (int attempt = 1;; ++attempt) {
    ReserveAsk ask;
    ask.input_tokens = input_tokens;
    ask.output_limit = wanted;
    ask.min_output = std::min(request.min_output_tokens() != 0
                                  ? request.min_output_tokens()
                                  : options_.min_output_tokens,
                              wanted);
    ask.purpose = attempt > 1                 ? "retry"
                  : request.purpose().empty() ? "turn"
                                              : request.purpose();
    ask.request_id =
        attempt == 1 ? request_id : absl::StrCat(request_id, "#", attempt);
    absl::StatusOr<Grant> grant = meter->Reserve(ask);
    if (!grant.ok()) {
      // A refusal keeps its "token_budget: ..." message first.
      return absl::Status(grant.status().code(),
                          key.Redact(grant.status().message()));
    }
    std::string body;
    if (grant->output_limit == wanted) {
      body = *full_body;
    } else {
      ASSIGN_OR_RETURN(
          body, wire_->Body(request, options_.model, grant->output_limit));
    }

    std::unique_ptr<StreamDecoder> decoder = wire_->NewDecoder(
        callbacks.on_text ? callbacks.on_text : TextHandler());
    SseParser parser(
        [&decoder](const SseEvent& event) { return decoder->OnEvent(event); });
    HttpRequest http{endpoint, wire_->Headers(key), std::move(body)};
    const HttpOutcome outcome = PostStreaming(
        http, options_.http, cancel,
        [&parser](absl::string_view bytes) { return parser.Feed(bytes); });
    ModelResponse response = decoder->Response();
    absl::StatusOr<int64_t> charge =
        grant->reservation->Settle(response.usage(), response.usage_reported());
    if (!charge.ok()) {
      return absl::Status(charge.status().code(),
                          key.Redact(charge.status().message()));
    }
    charged += *charge;

    if (outcome.kind == HttpOutcome::Kind::kCancelled) {
      return error(absl::StatusCode::kCancelled,
                   absl::StrCat("request ", request_id,
                                " cancelled in attempt ", attempt, "; ",
                                response.usage_reported()
                                    ? "charged its reported usage"
                                    : absl::StrCat("its reservation of ",
                                                   grant->reservation->tokens(),
                                                   " tokens stays spent")));
    }
    if (outcome.status_code == 200 && decoder->complete() &&
        !decoder->stream_error().has_value() &&
        absl::StartsWithIgnoreCase(outcome.content_type, "text/event-stream")) {
      response.set_max_tokens(grant->output_limit);
      response.set_attempts(attempt);
      response.set_charged_tokens(charged);
      return response;
    }
    const Failure failure = Classify(outcome, *decoder);
    if (!failure.retryable) return error(failure.code, failure.reason);
    if (attempt >= options_.retry.max_attempts) {
      return error(absl::StatusCode::kUnavailable,
                   absl::StrCat("gave up after ", attempt,
                                " attempts; the last: ", failure.reason));
    }
    RetryNotice notice;
    notice.next_attempt = attempt + 1;
    notice.reason = key.Redact(failure.reason);
    notice.delay = RetryDelay(options_.retry, attempt, outcome.retry_after,
                              outcome.retry_after_ms, absl::Now());
    if (callbacks.on_retry) callbacks.on_retry(notice);
    options_.sleep(notice.delay, cancel);
    if (cancel != nullptr && cancel->cancelled()) {
      return error(absl::StatusCode::kCancelled,
                   absl::StrCat("request ", request_id,
                                " cancelled while waiting to retry after: ",
                                failure.reason));
    }
  }
}

}  // namespace provider
}  // namespace garuda
