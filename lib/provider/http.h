// One streamed HTTP POST over libcurl: the model answer's bytes go to a
// handler as they arrive; an error answer's body is kept for its message;
// a CancelFlag stops the transfer in flight.
#ifndef GARUDA_LIB_PROVIDER_HTTP_H_
#define GARUDA_LIB_PROVIDER_HTTP_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/base/cancel_flag.h"

namespace garuda {
namespace provider {

struct HttpRequest {
  std::string url;
  // "Name: value" lines.
  std::vector<std::string> headers;
  std::string body;
  // Another method than POST ("DELETE": lib/mcp ends a session), with the
  // same body handling.
  std::string method;
};

struct HttpOptions {
  absl::Duration connect_timeout = absl::Seconds(30);
  // A stream that sends nothing for this long has failed (providers send
  // keep-alive pings far more often).
  absl::Duration idle_timeout = absl::Minutes(5);
  // Of an error answer's body, this much is kept.
  size_t max_error_body = 64 << 10;
  // "host:port" of an HTTP proxy, reached with CONNECT for http:// and
  // https:// alike, whatever no_proxy says (lib/mcp: the session's proxy).
  // Empty: libcurl's default (the environment's proxy variables).
  std::string proxy;
  // With `proxy`: the proxy is reached at this Unix socket address (the
  // bytes of sun_path; abstract when the first is '\0') instead of over
  // TCP: the agent, which may not connect anywhere but to its provider,
  // reaches a remote MCP server's proxy this way (lib/staging/mcp_remote.h).
  // `proxy` still names it, so that libcurl speaks CONNECT through it.
  std::string proxy_unix_address;
  // Answer headers to keep in HttpOutcome::headers (lower-case names), and
  // to hand, as each arrives (before any of the body), to `on_header`.
  std::vector<std::string> keep_headers;
  std::function<void(const std::string& name, const std::string& value)>
      on_header;
};

struct HttpOutcome {
  enum class Kind {
    kCompleted,       // the whole answer arrived
    kCancelled,       // the CancelFlag stopped it
    kHandlerStopped,  // the body handler returned an error: `handler_error`
    kNetworkError,    // no complete answer: `network_error` says why
  };
  Kind kind = Kind::kNetworkError;
  long status_code = 0;  // 0 when no answer arrived
  std::string content_type;
  std::string retry_after;     // the Retry-After header, as sent
  std::string retry_after_ms;  // retry-after-ms (OpenAI), as sent
  // HttpOptions::keep_headers that came, by lower-case name.
  std::map<std::string, std::string> headers;
  // Bytes of a non-streamed answer (any status but a 200 event stream),
  // up to HttpOptions::max_error_body.
  std::string error_body;
  std::string network_error;
  absl::Status handler_error;
  // Body bytes that reached the handler.
  size_t streamed_bytes = 0;
};

// Loads libcurl and its TLS library (OpenSSL reads its configuration). The
// first PostStreaming does it too; a program that locks itself down calls it
// before, while it can still read /usr/lib/ssl.
void InitializeHttp();

// A 200 answer whose Content-Type is text/event-stream goes to `on_stream`;
// anything else is kept in error_body. Only http:// and https:// URLs are
// accepted; redirects are not followed.
HttpOutcome PostStreaming(
    const HttpRequest& request, const HttpOptions& options,
    const CancelFlag* cancel,
    const std::function<absl::Status(absl::string_view)>& on_stream);

}  // namespace provider
}  // namespace garuda

#endif  // GARUDA_LIB_PROVIDER_HTTP_H_
