#include "lib/netproxy/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/unique_fd.h"
#include "lib/netproxy/request.h"

namespace garuda {
namespace netproxy {
namespace {

// A client that sends nothing for this long is dropped.
constexpr int kHeadTimeoutMs = 30 * 1000;

bool WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Answers a refused connection and closes it so that the answer is read:
// the client may still be sending (an over-long head, a body), and closing
// a socket with unread bytes resets it, which can lose the answer or kill a
// writer with SIGPIPE. So: the answer, our end of sending, then what the
// client still sends is read and dropped until it closes, up to 1 MiB or
// 2 s.
void Refuse(int fd, absl::string_view answer) {
  if (!WriteAll(fd, answer)) return;
  ::shutdown(fd, SHUT_WR);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  char sink[16 * 1024];
  for (size_t drained = 0; drained < (1u << 20);) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    struct pollfd p = {fd, POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return;
    ssize_t n = ::recv(fd, sink, sizeof sink, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    drained += static_cast<size_t>(n);
  }
}

// Reads until `complete` says the bytes so far hold what is needed, the cap
// is reached, the peer closes or the deadline passes.
bool ReadUntil(int fd, std::string* bytes, size_t cap,
               const std::function<bool(const std::string&)>& complete) {
  char buffer[4096];
  while (!complete(*bytes)) {
    if (bytes->size() >= cap) return false;
    struct pollfd p = {fd, POLLIN, 0};
    int ready = ::poll(&p, 1, kHeadTimeoutMs);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return false;
    ssize_t n = ::recv(fd, buffer, std::min(sizeof buffer, cap - bytes->size()), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes->append(buffer, static_cast<size_t>(n));
  }
  return true;
}

// A tunnel's two sockets and what its two directions tell each other.
struct Tunnel {
  int client = -1;
  int server = -1;
  // Readable once the server's side has ended, so that the direction that
  // reads the client stops waiting without a limit.
  UniqueFd server_ended;
  std::atomic<bool> server_done{false};
};

// How one direction of a tunnel ended.
enum class PumpEnd {
  kEnded,        // the sender ended its side (it read as the end of input)
  kLimit,        // `limit` bytes went, and no more may
  kFailed,       // a read or a write failed (a reset, a closed peer)
  kIdle,         // the client sent nothing for kHalfClosedIdleMs after the
                 // server's end
};

// After the server has ended its side, a client that neither sends nor
// ends its own for this long is cut off: the connection's thread must not
// wait forever for a client that never closes.
constexpr int kHalfClosedIdleMs = 60 * 1000;

// Waits until `from` is readable. Reading the client, the wait becomes
// limited once the server has ended (the eventfd wakes a wait begun
// before). False: the client stayed silent past that limit.
bool WaitReadable(const Tunnel& tunnel, int from) {
  const bool reading_client = from == tunnel.client;
  while (true) {
    const bool limited = reading_client && tunnel.server_done.load();
    struct pollfd p[2] = {{from, POLLIN, 0}, {tunnel.server_ended.get(), POLLIN, 0}};
    const int count = reading_client && !limited && tunnel.server_ended.valid() ? 2 : 1;
    int ready = ::poll(p, count, limited ? kHalfClosedIdleMs : -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return true;  // the read that follows says what is wrong
    if (ready == 0) return false;
    if (p[0].revents != 0) return true;
  }
}

// Copies from `from` to `to` through a buffer: the way when splice(2) does
// not take one of the two descriptors.
PumpEnd CopyAll(const Tunnel& tunnel, int from, int to, uint64_t limit, uint64_t* moved) {
  std::vector<char> buffer(64 * 1024);
  while (*moved < limit) {
    if (!WaitReadable(tunnel, from)) return PumpEnd::kIdle;
    size_t want = static_cast<size_t>(std::min<uint64_t>(buffer.size(), limit - *moved));
    ssize_t n = ::recv(from, buffer.data(), want, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return PumpEnd::kFailed;
    if (n == 0) return PumpEnd::kEnded;
    *moved += static_cast<uint64_t>(n);
    if (!WriteAll(to, absl::string_view(buffer.data(), static_cast<size_t>(n)))) {
      return PumpEnd::kFailed;
    }
  }
  return PumpEnd::kLimit;
}

// Moves bytes from `from` to `to` until `from` ends or `limit` bytes have
// gone. Through a pipe with splice(2): the pages go from one socket's queue
// to the other's without a copy into the proxy and out again
// (bench/netproxy/README.md: a third of the CPU of a copy through a buffer,
// and more throughput, since the proxy shares the cores with the command).
// Every byte taken into the pipe is written out before the next read, so
// when this returns kEnded or kLimit all of them have reached `to`'s send
// queue and the caller may pass the end on behind them.
PumpEnd Pump(const Tunnel& tunnel, int from, int to, uint64_t limit) {
  uint64_t moved = 0;
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return CopyAll(tunnel, from, to, limit, &moved);
  UniqueFd pipe_out(ends[0]), pipe_in(ends[1]);
  // A pipe starts at the default 64 KiB. A stream that has moved
  // kGrowAfter bytes (a download, not one of the many small requests of a
  // package manager) gets 1 MiB: fewer calls per megabyte, about 40 % more
  // throughput. Not from the start, because every enlarged pipe counts
  // against the person's pipe quota (fs.pipe-user-pages-soft), beyond which
  // their other programs' new pipes are made small; a refusal leaves the
  // default.
  constexpr uint64_t kGrowAfter = 4 << 20;
  auto pipe_size = [&pipe_in] {
    int size = ::fcntl(pipe_in.get(), F_GETPIPE_SZ);
    return size > 0 ? static_cast<size_t>(size) : size_t{64 * 1024};
  };
  size_t chunk = pipe_size();
  bool grown = false;
  while (moved < limit) {
    if (!WaitReadable(tunnel, from)) return PumpEnd::kIdle;
    size_t want = static_cast<size_t>(std::min<uint64_t>(chunk, limit - moved));
    ssize_t n = ::splice(from, nullptr, pipe_in.get(), nullptr, want, SPLICE_F_MOVE);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EINVAL && moved == 0) {
      return CopyAll(tunnel, from, to, limit, &moved);
    }
    if (n < 0) return PumpEnd::kFailed;
    if (n == 0) return PumpEnd::kEnded;
    moved += static_cast<uint64_t>(n);
    if (!grown && moved >= kGrowAfter) {
      grown = true;
      (void)::fcntl(pipe_in.get(), F_SETPIPE_SZ, 1 << 20);
      chunk = pipe_size();
    }
    for (size_t left = static_cast<size_t>(n); left > 0;) {
      ssize_t w = ::splice(pipe_out.get(), nullptr, to, nullptr, left, SPLICE_F_MOVE);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return PumpEnd::kFailed;
      left -= static_cast<size_t>(w);
    }
  }
  return PumpEnd::kLimit;
}

// Reads and drops what the client still sends after the last byte it may
// send (a plain request's body), until its end: closing a socket with
// unread bytes resets the connection, and a reset throws away the answer
// still queued for the client. At most 1 MiB; a client that sends more, or
// stays silent past the limit after the server's end, is cut off (false).
bool DropTheRest(const Tunnel& tunnel) {
  char sink[16 * 1024];
  for (size_t dropped = 0; dropped < (1u << 20);) {
    if (!WaitReadable(tunnel, tunnel.client)) return false;
    ssize_t n = ::recv(tunnel.client, sink, sizeof sink, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    dropped += static_cast<size_t>(n);
  }
  return false;
}

// Runs `work` on a thread of its own, joined (`joinable` set) or detached
// (`joinable` null); false when no thread could be made. std::thread throws
// then, and with nothing to catch it the proxy would end with every tunnel
// of the session: reaching the person's process limit must end one
// connection, not the proxy.
bool StartThread(std::function<void()> work, pthread_t* joinable) {
  auto* owned = new std::function<void()>(std::move(work));
  pthread_attr_t attributes;
  if (::pthread_attr_init(&attributes) != 0) {
    delete owned;
    return false;
  }
  if (joinable == nullptr) {
    ::pthread_attr_setdetachstate(&attributes, PTHREAD_CREATE_DETACHED);
  }
  pthread_t thread;
  const int failed = ::pthread_create(
      &thread, &attributes,
      [](void* argument) -> void* {
        std::unique_ptr<std::function<void()>> run(
            static_cast<std::function<void()>*>(argument));
        (*run)();
        return nullptr;
      },
      owned);
  ::pthread_attr_destroy(&attributes);
  if (failed != 0) {
    delete owned;
    return false;
  }
  if (joinable != nullptr) *joinable = thread;
  return true;
}

// Both ways, one thread per direction, each passing its sender's end on
// to the other side as a half-close (shutdown(SHUT_WR) behind the last
// byte), until both have ended. Either side may end first and the other
// direction goes on: a client may upload after the server has said all it
// will. `client_to_server_limit` caps what goes from the client (a plain
// HTTP body: nothing behind it reaches the server). When a direction fails
// (a reset, a write to a closed peer), or a client stays silent too long
// after the server's end, both sockets are shut down, which ends the other
// direction at once. Without a thread for the second direction the
// connection ends (the caller closes both sockets).
void Relay(int client, int server, uint64_t client_to_server_limit) {
  Tunnel tunnel;
  tunnel.client = client;
  tunnel.server = server;
  tunnel.server_ended = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  auto cut_off = [&tunnel] {
    ::shutdown(tunnel.client, SHUT_RDWR);
    ::shutdown(tunnel.server, SHUT_RDWR);
  };
  pthread_t upstream;
  if (!StartThread(
          [&tunnel, &cut_off, client_to_server_limit] {
            const PumpEnd end =
                Pump(tunnel, tunnel.client, tunnel.server, client_to_server_limit);
            if (end == PumpEnd::kEnded || end == PumpEnd::kLimit) {
              ::shutdown(tunnel.server, SHUT_WR);
            }
            if ((end == PumpEnd::kLimit && !DropTheRest(tunnel)) ||
                end == PumpEnd::kFailed || end == PumpEnd::kIdle) {
              cut_off();
            }
          },
          &upstream)) {
    return;
  }
  if (Pump(tunnel, tunnel.server, tunnel.client, UINT64_MAX) == PumpEnd::kEnded) {
    ::shutdown(tunnel.client, SHUT_WR);
    tunnel.server_done = true;
    uint64_t one = 1;
    if (tunnel.server_ended.valid()) (void)!::write(tunnel.server_ended.get(), &one, sizeof one);
  } else {
    cut_off();
  }
  ::pthread_join(upstream, nullptr);
}

bool IsLocalAddress(const sockaddr* address) {
  if (address->sa_family == AF_INET) {
    uint32_t ip = ntohl(reinterpret_cast<const sockaddr_in*>(address)->sin_addr.s_addr);
    return (ip >> 24) == 127 || ip == 0 || (ip >> 16) == 0xA9FE /*169.254*/ ||
           (ip >> 28) == 0xE /*multicast*/;
  }
  if (address->sa_family == AF_INET6) {
    const in6_addr& ip = reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
    return IN6_IS_ADDR_LOOPBACK(&ip) || IN6_IS_ADDR_UNSPECIFIED(&ip) ||
           IN6_IS_ADDR_LINKLOCAL(&ip) || IN6_IS_ADDR_MULTICAST(&ip) ||
           (IN6_IS_ADDR_V4MAPPED(&ip) && ip.s6_addr[12] == 127);
  }
  return true;
}

std::string HttpRefusal(int code, absl::string_view status, absl::string_view body) {
  return absl::StrCat("HTTP/1.1 ", code, " ", status,
                      "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ",
                      body.size(), "\r\nConnection: close\r\n\r\n", body);
}

}  // namespace

ProxyServer::ProxyServer(ProxyOptions options)
    : options_(std::move(options)),
      wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

std::string ProxyServer::RefusalText(const ProxyEvent& event) {
  return absl::StrCat("garuda: network: refused ", event.host, ":", event.port, " (",
                      event.why, ")\n");
}

bool ProxyServer::Check(const std::string& host, uint16_t port, ProxyEvent* event) {
  event->host = DomainRules::Normalize(host);
  if (event->host.empty()) event->host = host.substr(0, 255);
  event->port = port;
  if (options_.test_allow_everything) {
    event->allowed = true;
    return true;
  }
  switch (options_.rules.Check(host)) {
    case DomainRules::Verdict::kDenied:
      event->why = "in sandbox.deniedDomains";
      return false;
    case DomainRules::Verdict::kNotListed:
      event->why = DomainRules::Normalize(host).empty()
                       ? "not a host name"
                       : "not in sandbox.allowedDomains";
      return false;
    case DomainRules::Verdict::kAllowed:
      break;
  }
  if (options_.allowed_ports.count(port) == 0) {
    event->why = absl::StrCat("port ", port, " is not in sandbox.allowedPorts");
    return false;
  }
  event->allowed = true;
  return true;
}

absl::StatusOr<int> ProxyServer::ConnectUpstream(const std::string& host, uint16_t port,
                                                 ProxyEvent* event) {
  const std::string normal = DomainRules::Normalize(host);
  std::string resolve = normal;
  // A local address is reached only when the person listed it as an IP
  // literal (or a test maps a name to it).
  unsigned char literal[16];
  bool mapped = ::inet_pton(AF_INET, normal.c_str(), literal) == 1 ||
                ::inet_pton(AF_INET6, normal.c_str(), literal) == 1;
  if (auto it = options_.test_name_map.find(normal); it != options_.test_name_map.end()) {
    resolve = it->second;
    mapped = true;
  }
  addrinfo hints = {};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = absl::StrCat(port);
  if (::getaddrinfo(resolve.c_str(), service.c_str(), &hints, &found) != 0 || !found) {
    event->allowed = false;
    event->why = "the name does not resolve";
    return absl::UnavailableError(event->why);
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> addresses(found, ::freeaddrinfo);
  for (addrinfo* address = found; address != nullptr; address = address->ai_next) {
    // An allowed name must not lead to the machine the proxy runs on (a name
    // that resolves to 127.0.0.1 would reach the host's own services).
    if (!mapped && IsLocalAddress(address->ai_addr)) continue;
    UniqueFd fd(::socket(address->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) continue;
    if (::connect(fd.get(), address->ai_addr, address->ai_addrlen) == 0) return fd.Release();
  }
  event->allowed = false;
  event->why = "no address of it could be reached (local addresses are never)";
  return absl::UnavailableError(event->why);
}

void ProxyServer::ServeConnection(int client_fd) {
  UniqueFd client(client_fd);
  Track(client.get());
  struct Untracker {
    ProxyServer* server;
    int fd;
    ~Untracker() { server->Untrack(fd); }
  } untrack_client{this, client.get()};
  std::string bytes;
  auto report = [&](const ProxyEvent& event) {
    if (options_.on_event) options_.on_event(event);
  };
  if (!ReadUntil(client.get(), &bytes, kMaxHeadBytes,
                 [](const std::string& b) { return !b.empty(); })) {
    return;
  }
  if (bytes[0] == 5) {  // SOCKS5
    size_t greeting = 0;
    if (!ReadUntil(client.get(), &bytes, 512, [&](const std::string& b) {
          auto parsed = ParseSocksGreeting(b);
          if (parsed.ok()) greeting = *parsed;
          return parsed.ok() || !absl::IsUnavailable(parsed.status());
        }) ||
        greeting == 0) {
      Refuse(client.get(), std::string("\x05\xff", 2));
      return;
    }
    WriteAll(client.get(), std::string("\x05\x00", 2));
    bytes.erase(0, greeting);
    absl::StatusOr<ProxyRequest> request = absl::UnavailableError("");
    size_t used = 0;
    ReadUntil(client.get(), &bytes, 512, [&](const std::string& b) {
      request = ParseSocksRequest(b, &used);
      return request.ok() || !absl::IsUnavailable(request.status());
    });
    auto reply = [&](char code) {
      const std::string answer = std::string("\x05", 1) + code +
                                 std::string("\x00\x01\x00\x00\x00\x00\x00\x00", 8);
      if (code == 0) {
        WriteAll(client.get(), answer);
      } else {
        Refuse(client.get(), answer);
      }
    };
    if (!request.ok()) {
      reply(absl::IsUnimplemented(request.status()) ? 0x07 : 0x01);
      return;
    }
    ProxyEvent event;
    if (!Check(request->host, request->port, &event)) {
      report(event);
      reply(0x02);  // connection not allowed by ruleset
      return;
    }
    absl::StatusOr<int> server = ConnectUpstream(request->host, request->port, &event);
    report(event);
    if (!server.ok()) {
      reply(0x04);  // host unreachable
      return;
    }
    UniqueFd upstream(*server);
    Track(upstream.get());
    Untracker untrack_upstream{this, upstream.get()};
    reply(0x00);
    if (bytes.size() > used && !WriteAll(upstream.get(), bytes.substr(used))) return;
    Relay(client.get(), upstream.get(), UINT64_MAX);
    return;
  }

  if (!ReadUntil(client.get(), &bytes, kMaxHeadBytes + 1, [](const std::string& b) {
        return b.find("\r\n\r\n") != std::string::npos;
      })) {
    if (bytes.size() > kMaxHeadBytes) {
      Refuse(client.get(), HttpRefusal(431, "Request Header Fields Too Large",
                                         "garuda: network: the request head is too large\n"));
    }
    return;
  }
  const size_t head_end = bytes.find("\r\n\r\n") + 4;
  absl::StatusOr<ProxyRequest> request = ParseHttpHead(bytes.substr(0, head_end));
  if (!request.ok()) {
    const bool too_large = absl::IsResourceExhausted(request.status());
    Refuse(client.get(),
           HttpRefusal(too_large ? 431 : 400,
                         too_large ? "Request Header Fields Too Large" : "Bad Request",
                         absl::StrCat("garuda: network: ", request.status().message(), "\n")));
    return;
  }
  ProxyEvent event;
  if (!Check(request->host, request->port, &event)) {
    report(event);
    Refuse(client.get(), HttpRefusal(403, "Forbidden", RefusalText(event)));
    return;
  }
  absl::StatusOr<int> server = ConnectUpstream(request->host, request->port, &event);
  report(event);
  if (!server.ok()) {
    Refuse(client.get(), HttpRefusal(502, "Bad Gateway", RefusalText(event)));
    return;
  }
  UniqueFd upstream(*server);
  Track(upstream.get());
  Untracker untrack_upstream{this, upstream.get()};
  const std::string rest = bytes.substr(head_end);
  if (request->kind == ProxyRequest::Kind::kConnect) {
    if (!WriteAll(client.get(), "HTTP/1.1 200 Connection established\r\n\r\n")) return;
    if (!rest.empty() && !WriteAll(upstream.get(), rest)) return;
    Relay(client.get(), upstream.get(), UINT64_MAX);
    return;
  }
  // Plain HTTP: the one request and its body, nothing after it.
  if (!WriteAll(upstream.get(), request->forward_head)) return;
  uint64_t body_left = request->body_length;
  const size_t first = static_cast<size_t>(std::min<uint64_t>(rest.size(), body_left));
  if (first > 0 && !WriteAll(upstream.get(), rest.substr(0, first))) return;
  body_left -= first;
  Relay(client.get(), upstream.get(), body_left);
}

void ProxyServer::Track(int fd) {
  std::lock_guard<std::mutex> lock(mutex_);
  open_fds_.insert(fd);
  if (stopping_) ::shutdown(fd, SHUT_RDWR);
}

void ProxyServer::Untrack(int fd) {
  std::lock_guard<std::mutex> lock(mutex_);
  open_fds_.erase(fd);
}

void ProxyServer::Stop() {
  std::lock_guard<std::mutex> lock(mutex_);
  stopping_ = true;
  for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  idle_.notify_all();
  uint64_t one = 1;
  if (wake_.valid()) (void)!::write(wake_.get(), &one, sizeof one);
}

absl::Status ProxyServer::Serve(int listen_fd) {
  while (!stopping_) {
    struct pollfd p[2] = {{listen_fd, POLLIN, 0}, {wake_.get(), POLLIN, 0}};
    // Without the eventfd (none could be made) Stop is seen within 200 ms.
    int ready = ::poll(p, wake_.valid() ? 2 : 1, wake_.valid() ? -1 : 200);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
    if (ready == 0 || stopping_) continue;
    if (p[0].revents & (POLLERR | POLLNVAL)) {
      return absl::InternalError("the listening socket failed");
    }
    {
      // At the cap, wait for a connection to end rather than spin on a
      // listening socket that stays readable.
      std::unique_lock<std::mutex> lock(mutex_);
      idle_.wait(lock, [this] {
        return active_ < options_.max_connections || stopping_;
      });
      if (stopping_) continue;
    }
    int client = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED) continue;
      return absl::InternalError(absl::StrCat("accept: ", std::strerror(errno)));
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++active_;
    }
    auto served = [this] {
      std::lock_guard<std::mutex> lock(mutex_);
      --active_;
      idle_.notify_all();
    };
    if (!StartThread(
            [this, client, served] {
              ServeConnection(client);
              served();
            },
            nullptr)) {
      // No thread for it: this connection is closed unanswered; the others
      // and the next ones go on.
      ::close(client);
      served();
    }
  }
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return active_ == 0; });
  return absl::OkStatus();
}

}  // namespace netproxy
}  // namespace garuda
