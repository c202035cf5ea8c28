// A small, strict HTTP/1.1 request reader and response writer for the
// witness (docs/audit.md, "Running a witness"). It accepts what the C2SP
// witness protocol needs and refuses the rest with a status code: no
// chunked bodies, no folded headers, one Content-Length, capped sizes,
// deadlines for a slow peer.
#ifndef GARUDA_LIB_AUDIT_HTTP_REQUEST_H_
#define GARUDA_LIB_AUDIT_HTTP_REQUEST_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace garuda {

struct HttpLimits {
  size_t max_head_bytes = 8 << 10;             // request line and headers
  size_t max_body_bytes = 128 << 10;           // a note is at most 64 KiB
  absl::Duration idle = absl::Seconds(30);     // between requests
  absl::Duration request = absl::Seconds(10);  // for one whole request
};

struct HttpRequest {
  std::string method, target, body;
  bool keep_alive = true;
};

// The error of a request that cannot be read: `status` is the HTTP status
// to answer (400, 405, 411, 413, 431, 501, 505), or 0 when the peer went
// away or timed out and nothing should be answered.
struct HttpError {
  int status = 0;
  std::string reason;
};

// Reads one request from `fd` (a connected socket), keeping bytes of the
// next one in `*pending`. On an error fills `*error` and returns false.
bool ReadHttpRequest(int fd, const HttpLimits& limits, std::string* pending,
                     HttpRequest* request, HttpError* error);

// "HTTP/1.1 <status> <reason>" with Content-Type, Content-Length and, when
// `close`, "Connection: close". False when the peer is gone.
bool WriteHttpResponse(int fd, int status, absl::string_view content_type,
                       absl::string_view body, bool close);

const char* HttpReason(int status);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_HTTP_REQUEST_H_
