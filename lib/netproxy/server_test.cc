#include "lib/netproxy/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/netproxy/echo_origin.h"
#include "lib/netproxy/request.h"

namespace garuda {
namespace netproxy {
namespace {

// An origin server on loopback: answers each connection with its first
// request line, then closes.
class Origin {
 public:
  Origin() {
    fd_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    socklen_t length = sizeof address;
    ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    EXPECT_EQ(::listen(fd_.get(), 16), 0);
    thread_ = std::thread([this] {
      while (true) {
        int client = ::accept(fd_.get(), nullptr, nullptr);
        if (client < 0) return;
        std::string got;
        char buffer[4096];
        while (got.find("\r\n\r\n") == std::string::npos) {
          ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
          if (n <= 0) break;
          got.append(buffer, n);
        }
        {
          std::lock_guard<std::mutex> lock(mutex_);
          heads_.push_back(got);
        }
        std::string reply = "HTTP/1.0 200 OK\r\n\r\norigin saw: " + got.substr(0, got.find("\r\n"));
        ::send(client, reply.data(), reply.size(), MSG_NOSIGNAL);
        ::close(client);
      }
    });
  }
  ~Origin() {
    ::shutdown(fd_.get(), SHUT_RDWR);
    thread_.join();
  }
  uint16_t port() const { return port_; }
  std::vector<std::string> heads() {
    std::lock_guard<std::mutex> lock(mutex_);
    return heads_;
  }

 private:
  UniqueFd fd_;
  uint16_t port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<std::string> heads_;
};

class ProxyServerTest : public ::testing::Test {
 protected:
  void Start(bool map_names = true) {
    auto rules = DomainRules::Create({"allowed.test", "*.allowed.test"}, {"denied.test"});
    ASSERT_TRUE(rules.ok());
    ProxyOptions options;
    options.rules = *rules;
    if (map_names) {
      for (const char* name : {"allowed.test", "www.allowed.test", "denied.test", "other.test"}) {
        options.test_name_map[name] = "127.0.0.1";
      }
    }
    StartWith(std::move(options));
  }
  void StartWith(ProxyOptions options) {
    if (server_) {
      server_->Stop();
      thread_.join();
    }
    options.allowed_ports = {origin_.port()};
    options.on_event = [this](const ProxyEvent& event) {
      std::lock_guard<std::mutex> lock(mutex_);
      events_.push_back(event);
    };
    server_ = std::make_unique<ProxyServer>(std::move(options));
    // A Unix socket's path has at most 107 bytes: TEST_TMPDIR is longer.
    if (socket_dir_.empty()) {
      char templ[] = "/tmp/garuda-proxy-XXXXXX";
      socket_dir_ = ::mkdtemp(templ);
    }
    socket_path_ = JoinPath(socket_dir_, "proxy.sock");
    ::unlink(socket_path_.c_str());
    listen_ = UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address = {};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path_.c_str());
    ASSERT_EQ(::bind(listen_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    ASSERT_EQ(::listen(listen_.get(), 16), 0);
    thread_ = std::thread([this] { EXPECT_TRUE(server_->Serve(listen_.get()).ok()); });
  }
  void TearDown() override {
    if (server_) server_->Stop();
    if (thread_.joinable()) thread_.join();
    if (!socket_dir_.empty()) {
      ::unlink(socket_path_.c_str());
      ::rmdir(socket_dir_.c_str());
    }
  }
  UniqueFd Connect() {
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address = {};
    address.sun_family = AF_UNIX;
    std::snprintf(address.sun_path, sizeof address.sun_path, "%s", socket_path_.c_str());
    EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    return fd;
  }
  // Sends `bytes`, then reads until the proxy closes (or `until` appears).
  std::string Exchange(int fd, const std::string& bytes, const std::string& until = "") {
    EXPECT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
    std::string got;
    char buffer[4096];
    while (until.empty() || got.find(until) == std::string::npos) {
      struct pollfd p = {fd, POLLIN, 0};
      if (::poll(&p, 1, 10000) <= 0) {
        ADD_FAILURE() << "no answer in 10 s; got so far: " << got;
        break;
      }
      ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      got.append(buffer, n);
    }
    return got;
  }
  std::string Request(const std::string& bytes) {
    UniqueFd fd = Connect();
    return Exchange(fd.get(), bytes);
  }
  std::vector<ProxyEvent> Events() {
    std::lock_guard<std::mutex> lock(mutex_);
    return events_;
  }

  Origin origin_;
  std::unique_ptr<ProxyServer> server_;
  std::string socket_dir_, socket_path_;
  UniqueFd listen_;
  std::thread thread_;
  std::mutex mutex_;
  std::vector<ProxyEvent> events_;
};

TEST_F(ProxyServerTest, ConnectToAnAllowedNameIsTunnelled) {
  Start();
  UniqueFd fd = Connect();
  std::string established =
      Exchange(fd.get(), absl::StrCat("CONNECT allowed.test:", origin_.port(), " HTTP/1.1\r\n\r\n"),
               "\r\n\r\n");
  EXPECT_EQ(established, "HTTP/1.1 200 Connection established\r\n\r\n");
  std::string reply = Exchange(fd.get(), "GET /inside HTTP/1.0\r\n\r\n");
  EXPECT_EQ(reply, "HTTP/1.0 200 OK\r\n\r\norigin saw: GET /inside HTTP/1.0");
  ASSERT_EQ(Events().size(), 1u);
  EXPECT_TRUE(Events()[0].allowed);
}

TEST_F(ProxyServerTest, PlainHttpReachesTheServerInOriginForm) {
  Start();
  std::string reply = Request(absl::StrCat("GET http://www.allowed.test:", origin_.port(),
                                           "/x HTTP/1.1\r\nProxy-Authorization: y\r\n\r\n"));
  EXPECT_EQ(reply, "HTTP/1.0 200 OK\r\n\r\norigin saw: GET /x HTTP/1.1");
  ASSERT_EQ(origin_.heads().size(), 1u);
  EXPECT_FALSE(absl::StrContains(origin_.heads()[0], "Proxy-Authorization"));
  EXPECT_TRUE(absl::StrContains(origin_.heads()[0], "Connection: close"));
}

TEST_F(ProxyServerTest, DeniedAndUnlistedNamesGetA403ThatSaysWhy) {
  Start();
  const std::string port = absl::StrCat(origin_.port());
  std::string denied = Request("CONNECT denied.test:" + port + " HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(absl::StartsWith(denied, "HTTP/1.1 403 Forbidden\r\n")) << denied;
  EXPECT_TRUE(absl::EndsWith(
      denied, "garuda: network: refused denied.test:" + port + " (in sandbox.deniedDomains)\n"));
  std::string other = Request("GET http://other.test:" + port + "/ HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(
      absl::EndsWith(other, "refused other.test:" + port + " (not in sandbox.allowedDomains)\n"))
      << other;
  std::string port_refused = Request("CONNECT allowed.test:22 HTTP/1.1\r\n\r\n");
  EXPECT_TRUE(absl::EndsWith(port_refused,
                             "refused allowed.test:22 (port 22 is not in sandbox.allowedPorts)\n"));
  // None reached the server; each refusal was reported.
  EXPECT_TRUE(origin_.heads().empty());
  std::vector<ProxyEvent> events = Events();
  ASSERT_EQ(events.size(), 3u);
  for (const ProxyEvent& event : events) EXPECT_FALSE(event.allowed);
  // Control: the allowed name on the same port does reach it.
  Request("GET http://allowed.test:" + port + "/ HTTP/1.1\r\n\r\n");
  EXPECT_EQ(origin_.heads().size(), 1u);
}

TEST_F(ProxyServerTest, MalformedAndOversizedRequestsAreRefused) {
  Start();
  EXPECT_TRUE(absl::StartsWith(Request("HELLO\r\n\r\n"), "HTTP/1.1 400 Bad Request"));
  const std::string port = absl::StrCat(origin_.port());
  EXPECT_TRUE(absl::StartsWith(
      Request("GET http://allowed.test:" + port + "/ HTTP/1.1\r\nHost: denied.test\r\n\r\n"),
      "HTTP/1.1 400 Bad Request"));
  std::string huge =
      "GET http://allowed.test/ HTTP/1.1\r\nX: " + std::string(kMaxHeadBytes, 'a') + "\r\n\r\n";
  EXPECT_TRUE(absl::StartsWith(Request(huge), "HTTP/1.1 431"));
  EXPECT_TRUE(origin_.heads().empty());
}

TEST_F(ProxyServerTest, Socks5ConnectsByNameAndRefusesByRule) {
  Start();
  {
    UniqueFd fd = Connect();
    Exchange(fd.get(), std::string("\x05\x01\x00", 3), std::string("\x05\x00", 2));
    std::string name = "allowed.test";
    std::string request = std::string("\x05\x01\x00\x03", 4) + static_cast<char>(name.size()) +
                          name + static_cast<char>(origin_.port() >> 8) +
                          static_cast<char>(origin_.port() & 0xff);
    ASSERT_EQ(::send(fd.get(), request.data(), request.size(), 0),
              static_cast<ssize_t>(request.size()));
    char reply[10];
    ASSERT_EQ(::recv(fd.get(), reply, 10, MSG_WAITALL), 10);
    EXPECT_EQ(reply[1], 0x00);
    EXPECT_EQ(Exchange(fd.get(), "GET /socks HTTP/1.0\r\n\r\n"),
              "HTTP/1.0 200 OK\r\n\r\norigin saw: GET /socks HTTP/1.0");
  }
  {
    UniqueFd fd = Connect();
    Exchange(fd.get(), std::string("\x05\x01\x00", 3), std::string("\x05\x00", 2));
    std::string name = "denied.test";
    std::string request = std::string("\x05\x01\x00\x03", 4) + static_cast<char>(name.size()) +
                          name + static_cast<char>(origin_.port() >> 8) +
                          static_cast<char>(origin_.port() & 0xff);
    std::string reply = Exchange(fd.get(), request);
    ASSERT_GE(reply.size(), 2u);
    EXPECT_EQ(reply[1], 0x02);  // not allowed by the rules
  }
  EXPECT_EQ(origin_.heads().size(), 1u);
}

TEST_F(ProxyServerTest, AnAllowedNameThatResolvesToThisMachineIsNotReached) {
  // Without the test's name map "localhost" would be resolved for real, to
  // loopback: the proxy must not let an allowed name lead to the host's own
  // services.
  ProxyOptions by_name;
  by_name.rules = *DomainRules::Create({"localhost"}, {});
  StartWith(std::move(by_name));
  std::string reply =
      Request(absl::StrCat("CONNECT localhost:", origin_.port(), " HTTP/1.1\r\n\r\n"));
  EXPECT_TRUE(absl::StartsWith(reply, "HTTP/1.1 502")) << reply;
  EXPECT_TRUE(origin_.heads().empty());
  // Control: the address itself, listed as an IP literal, is reached.
  ProxyOptions by_address;
  by_address.rules = *DomainRules::Create({"127.0.0.1"}, {});
  StartWith(std::move(by_address));
  reply = Request(absl::StrCat("GET http://127.0.0.1:", origin_.port(), "/ HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(reply, "HTTP/1.0 200 OK\r\n\r\norigin saw: GET / HTTP/1.1");
}

}  // namespace
}  // namespace netproxy
}  // namespace garuda

namespace garuda {
namespace netproxy {
namespace {

// The proxy as a sandboxed command meets it: on a TCP listener, with
// `origin_port` its one allowed port.
class TcpProxy {
 public:
  explicit TcpProxy(uint16_t origin_port) {
    server_ = std::make_unique<ProxyServer>(AllowedTestOptions(origin_port));
    listen_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    port_ = BindLoopback(listen_.get());
    thread_ = std::thread([this] { EXPECT_TRUE(server_->Serve(listen_.get()).ok()); });
  }
  ~TcpProxy() {
    server_->Stop();
    thread_.join();
  }
  UniqueFd Connect() { return ConnectLoopback(port_); }

 private:
  std::unique_ptr<ProxyServer> server_;
  UniqueFd listen_;
  uint16_t port_ = 0;
  std::thread thread_;
};

// Megabytes both ways at once through a tunnel (past the size at which a
// stream's pipe grows), the client's end of input passed on to the origin
// (which answers it by closing): every byte arrives, in order, and the
// relay ends.
TEST(ProxyRelayTest, ATunnelCarriesMegabytesBothWaysAndPassesOnTheEnd) {
  std::string payload(6 << 20, '\0');
  unsigned seed = 7;
  for (char& c : payload) c = static_cast<char>(rand_r(&seed));
  std::string echoed;
  {
    EchoOrigin origin;
    TcpProxy proxy(origin.port());
    UniqueFd fd = proxy.Connect();
    const std::string connect =
        absl::StrCat("CONNECT allowed.test:", origin.port(), " HTTP/1.1\r\n\r\n");
    ASSERT_EQ(::send(fd.get(), connect.data(), connect.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(connect.size()));
    const std::string established = "HTTP/1.1 200 Connection established\r\n\r\n";
    std::string answer(established.size(), '\0');
    ASSERT_EQ(::recv(fd.get(), answer.data(), answer.size(), MSG_WAITALL),
              static_cast<ssize_t>(answer.size()));
    ASSERT_EQ(answer, established);
    std::thread sender([&] {
      EXPECT_EQ(::send(fd.get(), payload.data(), payload.size(), MSG_NOSIGNAL),
                static_cast<ssize_t>(payload.size()));
      ::shutdown(fd.get(), SHUT_WR);
    });
    EXPECT_TRUE(ReadToEnd(fd.get(), &echoed)) << "the origin never saw the end of the upload";
    sender.join();
  }
  // Back whole, so the origin had them all and saw the end (it closes only
  // then).
  ASSERT_EQ(echoed.size(), payload.size());
  EXPECT_TRUE(echoed == payload) << "the bytes came back changed or out of order";
}

// Plain HTTP: the body the head announces goes on, then the origin sees the
// end; bytes after it (a second request smuggled behind the first) do not.
TEST(ProxyRelayTest, APlainRequestCarriesItsBodyAndNothingAfterIt) {
  EchoOrigin origin;
  TcpProxy proxy(origin.port());
  UniqueFd fd = proxy.Connect();
  const std::string head = absl::StrCat("POST http://allowed.test:", origin.port(),
                                        "/up HTTP/1.1\r\nHost: allowed.test:", origin.port(),
                                        "\r\nContent-Length: 5\r\n\r\n");
  auto send_all = [&](const std::string& bytes) {
    ASSERT_EQ(::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  };
  send_all(head + "he");
  // Once the start of the body is back from the origin, the proxy is past
  // the head and relaying: the rest of the body and what follows it meet
  // the relay's own limit.
  std::string echoed;
  ASSERT_TRUE(ReadToEnd(fd.get(), &echoed, "\r\n\r\nhe")) << echoed;
  send_all("lloGET http://other.test/ HTTP/1.1\r\n\r\n");
  // The client keeps its side open: only the body's length ends the upload.
  EXPECT_TRUE(ReadToEnd(fd.get(), &echoed)) << "the origin never saw the end of the body";
  EXPECT_TRUE(absl::StartsWith(echoed, "POST /up HTTP/1.1\r\n")) << echoed;
  EXPECT_TRUE(absl::EndsWith(echoed, "\r\n\r\nhello")) << echoed;
  EXPECT_FALSE(absl::StrContains(echoed, "other.test")) << echoed;
}

// A refusal while the client is still sending (here an over-long head):
// the client reads the whole answer, may go on sending, and sees the
// connection end cleanly, never reset (a reset can lose the answer and
// kills a writer such as a shell's printf with SIGPIPE).
TEST(ProxyRelayTest, ARefusedClientStillSendingGetsTheAnswerAndAnOrderlyEnd) {
  TcpProxy proxy(1);
  UniqueFd fd = proxy.Connect();
  const std::string head =
      "GET http://allowed.test/ HTTP/1.1\r\nX: " + std::string(kMaxHeadBytes + 100, 'a');
  ASSERT_EQ(::send(fd.get(), head.data(), head.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(head.size()));
  std::string answer;
  ASSERT_TRUE(ReadToEnd(fd.get(), &answer, "too large\n")) << answer;
  EXPECT_TRUE(absl::StartsWith(answer, "HTTP/1.1 431 ")) << answer;
  // The proxy has stopped reading the head with bytes of it unread; more
  // follow.
  const std::string more(100 * 1024, 'b');
  EXPECT_EQ(::send(fd.get(), more.data(), more.size(), MSG_NOSIGNAL),
            static_cast<ssize_t>(more.size()))
      << std::strerror(errno);
  ::shutdown(fd.get(), SHUT_WR);
  char byte;
  struct pollfd p = {fd.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10000), 1);
  EXPECT_EQ(::recv(fd.get(), &byte, 1, 0), 0) << std::strerror(errno);
}

// Random bytes, and random damage to valid requests, as the first bytes of a
// connection: each is answered or closed, nothing reaches the origin, and
// the proxy still serves a valid request afterwards.
TEST_F(ProxyServerTest, GarbageNeverCrashesItNorReachesTheOrigin) {
  Start();
  const std::string valid[] = {"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
                               "GET http://allowed.test/x HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
                               std::string("\x05\x01\x00\x05\x01\x00\x03\x0c"
                                           "allowed.test\x01\xbb",
                                           22)};
  unsigned seed = 21;
  for (int i = 0; i < 300; ++i) {
    std::string bytes;
    if (i % 2 == 0) {
      bytes.resize(1 + rand_r(&seed) % 600);
      for (char& c : bytes) c = static_cast<char>(rand_r(&seed));
    } else {
      bytes = valid[i % 3];
      // Damage: truncate, then flip a few bytes (never a valid request to
      // the origin's port: allowed_ports holds only its port, and these
      // name 443 or 80).
      bytes.resize(1 + rand_r(&seed) % bytes.size());
      for (int k = 0; k < 3; ++k) {
        bytes[rand_r(&seed) % bytes.size()] = static_cast<char>(rand_r(&seed));
      }
    }
    UniqueFd fd = Connect();
    ::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
    ::shutdown(fd.get(), SHUT_WR);  // the proxy must not wait 30 s for more
    char buffer[4096];
    struct pollfd p = {fd.get(), POLLIN, 0};
    while (::poll(&p, 1, 10000) > 0 && ::recv(fd.get(), buffer, sizeof buffer, 0) > 0) {
    }
  }
  EXPECT_TRUE(origin_.heads().empty());
  // Control: a valid request still goes through.
  std::string answer =
      Request(absl::StrCat("GET http://allowed.test:", origin_.port(),
                           "/ok HTTP/1.1\r\nHost: allowed.test:", origin_.port(), "\r\n\r\n"));
  EXPECT_TRUE(absl::StrContains(answer, "origin saw: GET /ok HTTP/1.1")) << answer;
}

}  // namespace
}  // namespace netproxy
}  // namespace garuda
