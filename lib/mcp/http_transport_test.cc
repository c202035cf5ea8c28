// Streamable HTTP reaches a server only through the proxy it is given:
// without one it is refused, a host the proxy refuses is never connected
// to, and the same request to an allowed host arrives (the control).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/unique_fd.h"
#include "lib/mcp/client.h"
#include "lib/netproxy/server.h"
#include "lib/rules/domain_rules.h"

namespace garuda {
namespace mcp {
namespace {

using ::testing::HasSubstr;

UniqueFd Listen(uint16_t* port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  EXPECT_EQ(
      ::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)),
      0);
  EXPECT_EQ(::listen(fd.get(), 16), 0);
  EXPECT_EQ(
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length),
      0);
  *port = ntohs(address.sin_port);
  return fd;
}

// An origin that answers every request with 404 and counts connections.
class Origin {
 public:
  Origin() : listener_(Listen(&port_)) {
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd ready{listener_.get(), POLLIN, 0};
        if (::poll(&ready, 1, 50) <= 0) continue;
        UniqueFd client(
            ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (!client.valid()) continue;
        ++connections_;
        char buffer[8192];
        (void)::read(client.get(), buffer, sizeof(buffer));
        const char answer[] =
            "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n"
            "Connection: close\r\n\r\nno server";
        (void)::write(client.get(), answer, sizeof(answer) - 1);
      }
    });
  }
  ~Origin() {
    stop_ = true;
    thread_.join();
  }
  uint16_t port() const { return port_; }
  int connections() const { return connections_; }

 private:
  uint16_t port_ = 0;
  UniqueFd listener_;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

// lib/netproxy's proxy on a loopback port, allowing `allowed` only.
class Proxy {
 public:
  Proxy(const std::string& allowed, uint16_t origin_port)
      : listener_(Listen(&port_)) {
    netproxy::ProxyOptions options;
    options.rules = *netproxy::DomainRules::Create({allowed}, {});
    options.allowed_ports = {origin_port};
    options.test_name_map = {{"allowed.test", "127.0.0.1"},
                             {"other.test", "127.0.0.1"}};
    server_ = std::make_unique<netproxy::ProxyServer>(std::move(options));
    thread_ = std::thread([this] { (void)server_->Serve(listener_.get()); });
  }
  ~Proxy() {
    server_->Stop();
    thread_.join();
  }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }

 private:
  uint16_t port_ = 0;
  UniqueFd listener_;
  std::unique_ptr<netproxy::ProxyServer> server_;
  std::thread thread_;
};

absl::Status ConnectThrough(const std::string& url, const std::string& proxy) {
  HttpOptions options;
  options.url = url;
  options.proxy_host_port = proxy;
  options.headers = {{"Authorization", "Bearer secret-token"}};
  absl::StatusOr<std::unique_ptr<Transport>> transport =
      HttpTransport(options, "remote");
  if (!transport.ok()) return transport.status();
  ConnectOptions connect;
  connect.start_timeout = absl::Seconds(10);
  return Client::Connect("remote", *std::move(transport), connect).status();
}

TEST(HttpTransportTest, NoProxyNoConnection) {
  HttpOptions options;
  options.url = "https://example.com/mcp";
  absl::StatusOr<std::unique_ptr<Transport>> transport =
      HttpTransport(options, "remote");
  ASSERT_FALSE(transport.ok());
  EXPECT_THAT(transport.status().message(),
              HasSubstr("mcp server 'remote': a remote server is reached only "
                        "through the session's proxy"));
}

TEST(HttpTransportTest, BadUrlAndHeadersRefused) {
  HttpOptions options;
  options.url = "file:///etc/passwd";
  options.proxy_host_port = "127.0.0.1:1";
  EXPECT_FALSE(HttpTransport(options, "remote").ok());
  options.url = "https://example.com/mcp";
  options.headers = {{"X-Token", "a\r\nHost: evil"}};
  absl::StatusOr<std::unique_ptr<Transport>> transport =
      HttpTransport(options, "remote");
  ASSERT_FALSE(transport.ok());
  EXPECT_THAT(transport.status().message(), HasSubstr("X-Token"));
}

TEST(HttpTransportTest, RefusedHostNeverReachedAllowedOneIs) {
  Origin origin;
  Proxy proxy("allowed.test", origin.port());
  // Refused by the proxy: no connection reaches the origin.
  absl::Status refused =
      ConnectThrough(absl::StrCat("http://other.test:", origin.port(), "/mcp"),
                     proxy.address());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(refused.message(),
              HasSubstr("mcp server 'remote': could not be reached at "
                        "http://other.test:"));
  EXPECT_THAT(refused.message(), HasSubstr("through the proxy"));
  EXPECT_EQ(origin.connections(), 0);
  // The control: an allowed host is reached through the same proxy (and
  // answers 404, which the client reports with the status).
  absl::Status reached = ConnectThrough(
      absl::StrCat("http://allowed.test:", origin.port(), "/mcp"),
      proxy.address());
  ASSERT_FALSE(reached.ok());
  EXPECT_THAT(reached.message(), HasSubstr("HTTP 404: no server"));
  EXPECT_THAT(reached.message(), testing::Not(HasSubstr("secret-token")));
  EXPECT_GT(origin.connections(), 0);
}

}  // namespace
}  // namespace mcp
}  // namespace garuda
