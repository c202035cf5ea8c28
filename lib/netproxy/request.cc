#include "lib/netproxy/request.h"

#include <arpa/inet.h>

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace garuda {
namespace netproxy {
namespace {

absl::Status Refused(absl::string_view why) {
  return absl::InvalidArgumentError(why);
}

// "host:port" or "[v6]:port"; `default_port` when there is no port (0: a
// port is required).
absl::Status SplitHostPort(absl::string_view text, uint16_t default_port,
                           std::string* host, uint16_t* port) {
  absl::string_view port_text;
  if (absl::StartsWith(text, "[")) {
    size_t close = text.find(']');
    if (close == absl::string_view::npos) return Refused("an IPv6 address without its ']'");
    *host = std::string(text.substr(0, close + 1));
    absl::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (!absl::ConsumePrefix(&rest, ":")) return Refused("text after an IPv6 address");
      port_text = rest;
    }
  } else {
    size_t colon = text.rfind(':');
    if (colon != absl::string_view::npos) {
      if (text.find(':') != colon) {
        return Refused("an IPv6 address must be written in brackets");
      }
      *host = std::string(text.substr(0, colon));
      port_text = text.substr(colon + 1);
    } else {
      *host = std::string(text);
    }
  }
  if (host->empty()) return Refused("no host");
  if (port_text.empty()) {
    if (default_port == 0) return Refused("no port");
    *port = default_port;
    return absl::OkStatus();
  }
  uint32_t number = 0;
  if (port_text.size() > 5 || !absl::SimpleAtoi(port_text, &number) || number == 0 ||
      number > 65535 || !absl::ascii_isdigit(static_cast<unsigned char>(port_text[0]))) {
    return Refused(absl::StrCat("\"", port_text, "\" is not a port"));
  }
  *port = static_cast<uint16_t>(number);
  return absl::OkStatus();
}

bool IsToken(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) &&
        !absl::StrContains("!#$%&'*+-.^_`|~", c)) {
      return false;
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<ProxyRequest> ParseHttpHead(absl::string_view head) {
  if (head.size() > kMaxHeadBytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("the request head is over ", kMaxHeadBytes, " bytes"));
  }
  if (!absl::EndsWith(head, "\r\n\r\n")) return Refused("the request head is not complete");
  std::vector<absl::string_view> lines =
      absl::StrSplit(head.substr(0, head.size() - 4), "\r\n");
  if (lines.size() > kMaxHeaders + 1) {
    return absl::ResourceExhaustedError(
        absl::StrCat("more than ", kMaxHeaders, " header lines"));
  }
  for (absl::string_view line : lines) {
    if (line.size() > kMaxLineBytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat("a line of the request is over ", kMaxLineBytes, " bytes"));
    }
    for (char c : line) {
      if (c == '\0' || c == '\r' || c == '\n') {
        return Refused("a control character in the request head");
      }
    }
  }
  std::vector<absl::string_view> words = absl::StrSplit(lines[0], ' ');
  if (words.size() != 3 || !IsToken(words[0]) ||
      !(words[2] == "HTTP/1.1" || words[2] == "HTTP/1.0")) {
    return Refused("the request line is not \"METHOD TARGET HTTP/1.1\"");
  }
  ProxyRequest request;
  std::string host_header;
  int host_headers = 0;
  bool chunked = false, has_length = false;
  std::vector<std::string> kept;
  for (size_t i = 1; i < lines.size(); ++i) {
    size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos || !IsToken(lines[i].substr(0, colon))) {
      return Refused("a header line without a name and a ':'");
    }
    const std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
    const absl::string_view value = absl::StripAsciiWhitespace(lines[i].substr(colon + 1));
    if (name == "host") {
      ++host_headers;
      host_header = std::string(value);
    } else if (name == "content-length") {
      if (has_length || !absl::SimpleAtoi(value, &request.body_length)) {
        return Refused("a Content-Length that is not one number");
      }
      has_length = true;
    } else if (name == "transfer-encoding") {
      chunked = true;
    }
    // Proxy-* is for us, never the server's; the connection is ours to set.
    if (absl::StartsWith(name, "proxy-") || name == "connection" || name == "keep-alive") {
      continue;
    }
    kept.push_back(std::string(lines[i]));
  }
  if (host_headers > 1) return Refused("more than one Host header");

  if (words[0] == "CONNECT") {
    request.kind = ProxyRequest::Kind::kConnect;
    if (absl::StrContains(words[1], '/')) {
      return Refused("a CONNECT target is \"host:port\"");
    }
    absl::Status split = SplitHostPort(words[1], 0, &request.host, &request.port);
    if (!split.ok()) return Refused(absl::StrCat("CONNECT ", words[1], ": ", split.message()));
    return request;
  }

  request.kind = ProxyRequest::Kind::kHttp;
  absl::string_view target = words[1];
  if (!absl::ConsumePrefix(&target, "http://")) {
    return Refused(absl::StrCat(
        "a request through the proxy names its server (\"http://host/path\"); \"",
        words[1], "\" does not (HTTPS goes through CONNECT)"));
  }
  size_t slash = target.find('/');
  absl::string_view authority = target.substr(0, slash);
  std::string path = slash == absl::string_view::npos ? "/" : std::string(target.substr(slash));
  if (absl::StrContains(authority, '@')) return Refused("user information in the URL");
  absl::Status split = SplitHostPort(authority, 80, &request.host, &request.port);
  if (!split.ok()) return Refused(absl::StrCat(words[1], ": ", split.message()));
  if (host_headers == 1) {
    std::string header_host;
    uint16_t header_port = 0;
    absl::Status header_split = SplitHostPort(host_header, 80, &header_host, &header_port);
    if (!header_split.ok() || absl::AsciiStrToLower(header_host) !=
                                  absl::AsciiStrToLower(request.host) ||
        header_port != request.port) {
      return Refused(absl::StrCat("the Host header \"", host_header,
                                  "\" does not match the request line's server \"",
                                  authority, "\""));
    }
  } else {
    kept.push_back(absl::StrCat("Host: ", authority));
  }
  if (chunked) {
    return Refused("a request body in chunks (Transfer-Encoding) is not passed on; send a Content-Length");
  }
  request.forward_head = absl::StrCat(words[0], " ", path, " ", words[2], "\r\n");
  for (const std::string& line : kept) absl::StrAppend(&request.forward_head, line, "\r\n");
  absl::StrAppend(&request.forward_head, "Connection: close\r\n\r\n");
  return request;
}

absl::StatusOr<size_t> ParseSocksGreeting(absl::string_view bytes) {
  if (bytes.size() < 2) return absl::UnavailableError("the greeting is not complete");
  if (bytes[0] != 5) return Refused("not SOCKS version 5");
  size_t methods = static_cast<unsigned char>(bytes[1]);
  if (methods == 0) return Refused("a SOCKS greeting without methods");
  if (bytes.size() < 2 + methods) return absl::UnavailableError("the greeting is not complete");
  for (size_t i = 0; i < methods; ++i) {
    if (bytes[2 + i] == 0) return 2 + methods;
  }
  return absl::PermissionDeniedError("the client offers no method without authentication");
}

absl::StatusOr<ProxyRequest> ParseSocksRequest(absl::string_view bytes, size_t* used) {
  if (bytes.size() < 5) return absl::UnavailableError("the request is not complete");
  if (bytes[0] != 5 || bytes[2] != 0) return Refused("a malformed SOCKS5 request");
  if (bytes[1] != 1) {
    return absl::UnimplementedError("only CONNECT is passed on (not BIND or UDP ASSOCIATE)");
  }
  ProxyRequest request;
  request.kind = ProxyRequest::Kind::kConnect;
  size_t at = 4;
  char text[INET6_ADDRSTRLEN];
  switch (bytes[3]) {
    case 1:
      if (bytes.size() < at + 4 + 2) return absl::UnavailableError("not complete");
      ::inet_ntop(AF_INET, bytes.data() + at, text, sizeof text);
      request.host = text;
      at += 4;
      break;
    case 3: {
      size_t length = static_cast<unsigned char>(bytes[4]);
      at = 5;
      if (length == 0) return Refused("an empty name");
      if (bytes.size() < at + length + 2) return absl::UnavailableError("not complete");
      request.host = std::string(bytes.substr(at, length));
      at += length;
      break;
    }
    case 4:
      if (bytes.size() < at + 16 + 2) return absl::UnavailableError("not complete");
      ::inet_ntop(AF_INET6, bytes.data() + at, text, sizeof text);
      request.host = text;
      at += 16;
      break;
    default:
      return absl::UnimplementedError("an address type SOCKS5 does not have");
  }
  request.port = static_cast<uint16_t>(static_cast<unsigned char>(bytes[at]) << 8 |
                                       static_cast<unsigned char>(bytes[at + 1]));
  if (request.port == 0) return Refused("port 0");
  *used = at + 2;
  return request;
}

}  // namespace netproxy
}  // namespace garuda
