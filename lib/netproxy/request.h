// What a client asks the proxy for, read from the first bytes of its
// connection: an HTTP CONNECT (HTTPS and anything else tunnelled, never
// decrypted), a plain HTTP request in absolute form, or a SOCKS5 CONNECT.
// Every length is checked before it is used; anything malformed is refused,
// never guessed at.
#ifndef GARUDA_LIB_NETPROXY_REQUEST_H_
#define GARUDA_LIB_NETPROXY_REQUEST_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace garuda {
namespace netproxy {

// The head of an HTTP request (request line and headers) may be at most
// this long; one line at most kMaxLineBytes.
inline constexpr size_t kMaxHeadBytes = 32 * 1024;
inline constexpr size_t kMaxLineBytes = 8 * 1024;
inline constexpr size_t kMaxHeaders = 100;

struct ProxyRequest {
  enum class Kind { kConnect, kHttp };
  Kind kind = Kind::kConnect;
  std::string host;  // as the client wrote it
  uint16_t port = 0;
  // kHttp: the head to send to the server, in origin form ("GET /path
  // HTTP/1.1"), without Proxy-* headers, with "Connection: close".
  std::string forward_head;
  // kHttp: the body's length from Content-Length (0 without one).
  uint64_t body_length = 0;
};

// `head` is the request up to and including its blank line. Refusals are
// INVALID_ARGUMENT with the reason ("the Host header \"b.test\" does not
// match the request line's host \"a.test\""), or RESOURCE_EXHAUSTED for a
// head, line or header count over the caps.
absl::StatusOr<ProxyRequest> ParseHttpHead(absl::string_view head);

// SOCKS5 (RFC 1928). The greeting: VER, NMETHODS, METHODS; "no
// authentication" must be offered. `bytes` must hold the whole greeting;
// returns how many bytes it took.
absl::StatusOr<size_t> ParseSocksGreeting(absl::string_view bytes);
// The request: VER 5, CMD 1 (CONNECT; BIND and UDP ASSOCIATE are refused),
// RSV, ATYP (1 IPv4, 3 a name, 4 IPv6), the address, the port.
// UNIMPLEMENTED for another command, INVALID_ARGUMENT when malformed,
// UNAVAILABLE when `bytes` does not hold all of it yet.
absl::StatusOr<ProxyRequest> ParseSocksRequest(absl::string_view bytes,
                                               size_t* used);

}  // namespace netproxy
}  // namespace garuda

#endif  // GARUDA_LIB_NETPROXY_REQUEST_H_
