// Loopback helpers of the proxy's tests, and their origin: each connection
// answered with every byte it sends, until its sender's end; then closed.
#ifndef GARUDA_LIB_NETPROXY_ECHO_ORIGIN_H_
#define GARUDA_LIB_NETPROXY_ECHO_ORIGIN_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "lib/base/unique_fd.h"
#include "lib/rules/domain_rules.h"
#include "lib/netproxy/server.h"

namespace garuda {
namespace netproxy {

// Binds `fd` to a free port of 127.0.0.1 and listens; returns the port.
inline uint16_t BindLoopback(int fd) {
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  EXPECT_EQ(::listen(fd, 16), 0);
  return ntohs(address.sin_port);
}

// The options of a proxy that allows only allowed.test (mapped to
// 127.0.0.1) on `origin_port`.
inline ProxyOptions AllowedTestOptions(uint16_t origin_port) {
  auto rules = DomainRules::Create({"allowed.test"}, {});
  EXPECT_TRUE(rules.ok()) << rules.status();
  ProxyOptions options;
  if (rules.ok()) options.rules = *rules;
  options.test_name_map["allowed.test"] = "127.0.0.1";
  options.allowed_ports = {origin_port};
  return options;
}

// A connection to `port` of 127.0.0.1.
inline UniqueFd ConnectLoopback(uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in to = {};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  return fd;
}

// Reads until the peer closes (true) or 10 s pass without a byte (false),
// or, with `until`, until the bytes so far end with it.
inline bool ReadToEnd(int fd, std::string* got, absl::string_view until = "") {
  std::vector<char> buffer(64 * 1024);
  struct pollfd p = {fd, POLLIN, 0};
  while (until.empty() || !absl::EndsWith(*got, until)) {
    if (::poll(&p, 1, 10000) <= 0) return false;
    ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n <= 0) return true;
    got->append(buffer.data(), static_cast<size_t>(n));
  }
  return true;
}

class EchoOrigin {
 public:
  EchoOrigin() : EchoOrigin(ListeningSocket()) {}
  // On `listener`, bound and listening already (made before a fork, when
  // no thread may run yet). The accepting thread starts only now: started
  // before the listen(2), its accept(2) fails at once and the origin
  // answers nothing while connections wait in its queue.
  explicit EchoOrigin(UniqueFd listener) : fd_(std::move(listener)) {
    sockaddr_in address = {};
    socklen_t length = sizeof address;
    ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      while (true) {
        int client = ::accept(fd_.get(), nullptr, nullptr);
        if (client < 0) return;
        std::lock_guard<std::mutex> lock(mutex_);
        echoes_.emplace_back(Echo, client);
      }
    });
  }
  // Waits for every connection to end (the proxy closes its side).
  ~EchoOrigin() {
    ::shutdown(fd_.get(), SHUT_RDWR);
    thread_.join();
    for (std::thread& echo : echoes_) echo.join();
  }
  uint16_t port() const { return port_; }

 private:
  static UniqueFd ListeningSocket() {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    BindLoopback(fd.get());
    return fd;
  }
  static void Echo(int fd) {
    UniqueFd client(fd);
    std::vector<char> buffer(64 * 1024);
    while (true) {
      ssize_t n = ::recv(client.get(), buffer.data(), buffer.size(), 0);
      if (n <= 0) return;
      for (ssize_t at = 0; at < n;) {
        ssize_t w = ::send(client.get(), buffer.data() + at, n - at, MSG_NOSIGNAL);
        if (w <= 0) return;
        at += w;
      }
    }
  }

  UniqueFd fd_;
  uint16_t port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::thread> echoes_;
};

}  // namespace netproxy
}  // namespace garuda

#endif  // GARUDA_LIB_NETPROXY_ECHO_ORIGIN_H_
