#include "lib/provider/http.h"

#include <curl/curl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace garuda {
namespace provider {
namespace {

struct EasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

struct Transfer {
  CURL* easy = nullptr;
  const HttpOptions* options = nullptr;
  const CancelFlag* cancel = nullptr;
  const std::function<absl::Status(absl::string_view)>* on_stream = nullptr;
  HttpOutcome* outcome = nullptr;
  bool decided = false;  // status and content type read
  bool streaming = false;
};

bool Cancelled(const Transfer& transfer) {
  return transfer.cancel != nullptr && transfer.cancel->cancelled();
}

size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  absl::string_view line(data, bytes);
  line = absl::StripTrailingAsciiWhitespace(line);
  if (absl::StartsWith(line, "HTTP/")) {
    // A new status line (after a 100 Continue): forget the previous headers.
    transfer->outcome->retry_after.clear();
    transfer->outcome->retry_after_ms.clear();
    transfer->outcome->headers.clear();
    return bytes;
  }
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos) return bytes;
  const std::string name = absl::AsciiStrToLower(line.substr(0, colon));
  const absl::string_view value =
      absl::StripAsciiWhitespace(line.substr(colon + 1));
  if (name == "retry-after") {
    transfer->outcome->retry_after = std::string(value);
  } else if (name == "retry-after-ms") {
    transfer->outcome->retry_after_ms = std::string(value);
  }
  for (const std::string& kept : transfer->options->keep_headers) {
    if (name != kept) continue;
    transfer->outcome->headers[name] = std::string(value);
    if (transfer->options->on_header) {
      transfer->options->on_header(name, std::string(value));
    }
  }
  return bytes;
}

size_t OnWrite(char* data, size_t size, size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const size_t bytes = size * count;
  // Returning less than `bytes` stops the transfer.
  if (Cancelled(*transfer)) return 0;
  HttpOutcome& outcome = *transfer->outcome;
  if (!transfer->decided) {
    transfer->decided = true;
    curl_easy_getinfo(transfer->easy, CURLINFO_RESPONSE_CODE,
                      &outcome.status_code);
    const char* type = nullptr;
    curl_easy_getinfo(transfer->easy, CURLINFO_CONTENT_TYPE, &type);
    if (type != nullptr) outcome.content_type = type;
    transfer->streaming =
        outcome.status_code == 200 &&
        absl::StartsWithIgnoreCase(outcome.content_type, "text/event-stream");
  }
  if (!transfer->streaming) {
    const size_t room =
        transfer->options->max_error_body - outcome.error_body.size();
    outcome.error_body.append(data, std::min(room, bytes));
    return bytes;
  }
  absl::Status status = (*transfer->on_stream)(absl::string_view(data, bytes));
  if (!status.ok()) {
    outcome.handler_error = std::move(status);
    return 0;
  }
  outcome.streamed_bytes += bytes;
  // A cancel set by the handler itself stops the stream now.
  return Cancelled(*transfer) ? 0 : bytes;
}

// libcurl calls this often while bytes flow and about once a second while
// the server is silent.
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return Cancelled(*static_cast<Transfer*>(user)) ? 1 : 0;
}

// HttpOptions::proxy_unix_address: a Unix socket, and the address libcurl
// connects it to rewritten (which CURLOPT_OPENSOCKETFUNCTION may do).
// Handing libcurl a socket connected elsewhere does not work with the
// libcurl of Debian 12 (7.88): it calls connect(2) on it even after
// CURL_SOCKOPT_ALREADY_CONNECTED (curl issue 10626, fixed in 8.0).
curl_socket_t OpenUnixSocket(void* user, curlsocktype, curl_sockaddr* address) {
  const auto& path = *static_cast<const std::string*>(user);
  sockaddr_un unix_address = {};
  unix_address.sun_family = AF_UNIX;
  if (path.empty() || path.size() > sizeof unix_address.sun_path) {
    return CURL_SOCKET_BAD;
  }
  std::memcpy(unix_address.sun_path, path.data(), path.size());
  const socklen_t size =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
  // libcurl's storage behind `address` is a sockaddr_storage.
  static_assert(sizeof(sockaddr_un) <= sizeof(sockaddr_storage), "");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return CURL_SOCKET_BAD;
  address->family = AF_UNIX;
  address->protocol = 0;
  address->addrlen = size;
  std::memcpy(&address->addr, &unix_address, size);
  return fd;
}

}  // namespace

void InitializeHttp() {
  static std::once_flag once;
  // curl_global_init is not thread-safe; it runs once before any handle.
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

HttpOutcome PostStreaming(
    const HttpRequest& request, const HttpOptions& options,
    const CancelFlag* cancel,
    const std::function<absl::Status(absl::string_view)>& on_stream) {
  HttpOutcome outcome;
  if (cancel != nullptr && cancel->cancelled()) {
    outcome.kind = HttpOutcome::Kind::kCancelled;
    return outcome;
  }
  InitializeHttp();
  std::unique_ptr<CURL, EasyDeleter> easy(curl_easy_init());
  if (easy == nullptr) {
    outcome.network_error = "curl_easy_init failed (out of memory?)";
    return outcome;
  }
  std::unique_ptr<curl_slist, SlistDeleter> headers;
  std::vector<std::string> lines = request.headers;
  // No "Expect: 100-continue" round trip before the body.
  lines.push_back("Expect:");
  for (const std::string& line : lines) {
    curl_slist* grown = curl_slist_append(headers.get(), line.c_str());
    if (grown == nullptr) {
      outcome.network_error = "curl_slist_append failed (out of memory?)";
      return outcome;
    }
    // curl_slist_append returned the same list, one longer.
    headers.release();
    headers.reset(grown);
  }

  Transfer transfer;
  transfer.easy = easy.get();
  transfer.options = &options;
  transfer.cancel = cancel;
  transfer.on_stream = &on_stream;
  transfer.outcome = &outcome;

  char error_buffer[CURL_ERROR_SIZE] = {0};
  CURL* e = easy.get();
  curl_easy_setopt(e, CURLOPT_URL, request.url.c_str());
  // Only the web: never file://, ftp:// or anything else a bad base URL
  // could name, also not through a redirect (none is followed anyway).
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
  // No signals from libcurl: the agent handles SIGINT itself and may run
  // this on any thread.
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_POST, 1L);
  if (!request.method.empty()) {
    curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                   static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, OnWrite);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(e, CURLOPT_XFERINFODATA, &transfer);
  curl_easy_setopt(
      e, CURLOPT_CONNECTTIMEOUT_MS,
      static_cast<long>(absl::ToInt64Milliseconds(options.connect_timeout)));
  // Idle: under one byte a second for idle_timeout.
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
                   static_cast<long>(std::max<int64_t>(
                       1, absl::ToInt64Seconds(options.idle_timeout))));
  curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  if (!options.proxy.empty()) {
    // This proxy for every host (no_proxy from the environment ignored),
    // tunnelled with CONNECT also for http://.
    curl_easy_setopt(e, CURLOPT_PROXY, options.proxy.c_str());
    curl_easy_setopt(e, CURLOPT_NOPROXY, "");
    curl_easy_setopt(e, CURLOPT_HTTPPROXYTUNNEL, 1L);
    if (!options.proxy_unix_address.empty()) {
      curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, OpenUnixSocket);
      curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, &options.proxy_unix_address);
    }
  }

  const CURLcode code = curl_easy_perform(e);
  if (!transfer.decided) {
    // No body at all (e.g. an empty error answer): read the status here.
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &outcome.status_code);
    const char* type = nullptr;
    curl_easy_getinfo(e, CURLINFO_CONTENT_TYPE, &type);
    if (type != nullptr) outcome.content_type = type;
  }
  if (Cancelled(transfer)) {
    outcome.kind = HttpOutcome::Kind::kCancelled;
  } else if (!outcome.handler_error.ok()) {
    outcome.kind = HttpOutcome::Kind::kHandlerStopped;
  } else if (code == CURLE_OK) {
    outcome.kind = HttpOutcome::Kind::kCompleted;
  } else {
    outcome.kind = HttpOutcome::Kind::kNetworkError;
    outcome.network_error =
        error_buffer[0] != '\0' ? error_buffer : curl_easy_strerror(code);
  }
  return outcome;
}

}  // namespace provider
}  // namespace garuda
