#include "lib/audit/http_request.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace garuda {
namespace {

bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         absl::StrContains("!#$%&'*+-.^_`|~", c);
}

// Reads more bytes into `*pending` before `deadline`. False: the peer
// closed, an error, or the deadline passed.
bool ReadMore(int fd, absl::Time deadline, std::string* pending) {
  for (;;) {
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    struct pollfd poll_fd = {fd, POLLIN, 0};
    int ready = ::poll(&poll_fd, 1,
                       static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    char buffer[16 << 10];
    ssize_t got = ::recv(fd, buffer, sizeof(buffer), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    pending->append(buffer, static_cast<size_t>(got));
    return true;
  }
}

bool Fail(HttpError* error, int status, std::string reason) {
  error->status = status;
  error->reason = std::move(reason);
  return false;
}

}  // namespace

const char* HttpReason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 422:
      return "Unprocessable Entity";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

bool ReadHttpRequest(int fd, const HttpLimits& limits, std::string* pending,
                     HttpRequest* request, HttpError* error) {
  *request = HttpRequest();
  // Until the first byte a connection may idle; from it on the whole
  // request must arrive in time.
  absl::Time deadline = absl::Now() + limits.idle;
  bool started = !pending->empty();
  if (started) deadline = absl::Now() + limits.request;
  size_t head_end;
  while ((head_end = pending->find("\r\n\r\n")) == std::string::npos) {
    if (pending->size() > limits.max_head_bytes) {
      return Fail(error, 431, "the request's head is too long");
    }
    if (!ReadMore(fd, deadline, pending)) return Fail(error, 0, "");
    if (!started) {
      started = true;
      deadline = absl::Now() + limits.request;
    }
  }
  if (head_end + 4 > limits.max_head_bytes) {
    return Fail(error, 431, "the request's head is too long");
  }
  absl::string_view head = absl::string_view(*pending).substr(0, head_end);
  std::vector<absl::string_view> lines = absl::StrSplit(head, "\r\n");
  std::vector<absl::string_view> first = absl::StrSplit(lines[0], ' ');
  if (first.size() != 3 || first[0].empty() || first[1].empty()) {
    return Fail(error, 400, "a malformed request line");
  }
  for (char c : first[0]) {
    if (!IsTokenChar(c)) return Fail(error, 400, "a malformed method");
  }
  if (first[2] != "HTTP/1.1" && first[2] != "HTTP/1.0") {
    return Fail(error, 505, "only HTTP/1.1 is spoken here");
  }
  for (char c : first[1]) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return Fail(error, 400, "a malformed request target");
    }
  }
  request->method = std::string(first[0]);
  request->target = std::string(first[1]);
  request->keep_alive = first[2] == "HTTP/1.1";
  bool has_length = false, expect_continue = false;
  size_t length = 0;
  for (size_t i = 1; i < lines.size(); ++i) {
    absl::string_view line = lines[i];
    if (line.empty() || line[0] == ' ' || line[0] == '\t') {
      return Fail(error, 400, "a folded or empty header line");
    }
    size_t colon = line.find(':');
    if (colon == absl::string_view::npos || colon == 0) {
      return Fail(error, 400, "a header line without a name");
    }
    absl::string_view name = line.substr(0, colon);
    for (char c : name) {
      if (!IsTokenChar(c)) return Fail(error, 400, "a malformed header name");
    }
    absl::string_view value =
        absl::StripAsciiWhitespace(line.substr(colon + 1));
    for (char c : value) {
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) {
        return Fail(error, 400, "a control character in a header");
      }
    }
    if (absl::EqualsIgnoreCase(name, "Content-Length")) {
      if (has_length || value.empty() || value.size() > 12 ||
          !std::all_of(value.begin(), value.end(),
                       [](char c) { return c >= '0' && c <= '9'; }) ||
          !absl::SimpleAtoi(value, &length)) {
        return Fail(error, 400, "a bad or repeated Content-Length");
      }
      has_length = true;
    } else if (absl::EqualsIgnoreCase(name, "Transfer-Encoding")) {
      return Fail(error, 501, "Transfer-Encoding is not supported");
    } else if (absl::EqualsIgnoreCase(name, "Connection")) {
      if (absl::EqualsIgnoreCase(value, "close")) request->keep_alive = false;
      if (absl::EqualsIgnoreCase(value, "keep-alive"))
        request->keep_alive = true;
    } else if (absl::EqualsIgnoreCase(name, "Expect")) {
      if (!absl::EqualsIgnoreCase(value, "100-continue")) {
        return Fail(error, 400, "an unknown expectation");
      }
      expect_continue = true;
    }
  }
  if (request->method == "POST" && !has_length) {
    return Fail(error, 411, "a POST needs a Content-Length");
  }
  if (length > limits.max_body_bytes) {
    return Fail(error, 413, "the body is too large");
  }
  pending->erase(0, head_end + 4);
  if (expect_continue && pending->size() < length &&
      !WriteHttpResponse(fd, 100, "", "", false)) {
    return Fail(error, 0, "");
  }
  while (pending->size() < length) {
    if (!ReadMore(fd, deadline, pending)) return Fail(error, 0, "");
  }
  request->body = pending->substr(0, length);
  pending->erase(0, length);
  return true;
}

bool WriteHttpResponse(int fd, int status, absl::string_view content_type,
                       absl::string_view body, bool close) {
  std::string out =
      absl::StrCat("HTTP/1.1 ", status, " ", HttpReason(status), "\r\n");
  if (status != 100) {
    if (!content_type.empty()) {
      absl::StrAppend(&out, "Content-Type: ", content_type, "\r\n");
    }
    absl::StrAppend(&out, "Content-Length: ", body.size(), "\r\n");
    if (close) absl::StrAppend(&out, "Connection: close\r\n");
  }
  absl::StrAppend(&out, "\r\n", body);
  size_t done = 0;
  while (done < out.size()) {
    ssize_t sent =
        ::send(fd, out.data() + done, out.size() - done, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent <= 0) return false;
    done += static_cast<size_t>(sent);
  }
  return true;
}

}  // namespace garuda
