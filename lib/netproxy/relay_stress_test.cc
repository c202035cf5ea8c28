// The end of a stream through the proxy's relay, many times in one run:
// the client's end of input, the origin's, and the end of a plain request's
// body, each with small and large transfers, arriving with the last bytes
// and after them. A lost or early end shows as a wrong byte count, a count
// the origin never reports, or a read that waits out its time.
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/unique_fd.h"
#include "lib/netproxy/echo_origin.h"
#include "lib/netproxy/server.h"

namespace garuda {
namespace netproxy {
namespace {

// Sizes that cross the relay's boundaries: one byte, a pipe's default
// 64 KiB either side, and past the 4 MiB after which a stream's pipe grows.
const size_t kSizes[] = {1, 100, 65535, 65537, 300 * 1024, 5 << 20};

std::string Bytes(size_t size, unsigned seed) {
  std::string bytes(size, '\0');
  for (char& c : bytes) c = static_cast<char>(rand_r(&seed));
  return bytes;
}

bool SendAll(int fd, absl::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

// Reads exactly `size` bytes, or fails after 10 s without one.
bool ReadExactly(int fd, size_t size, std::string* got) {
  std::vector<char> buffer(64 * 1024);
  struct pollfd p = {fd, POLLIN, 0};
  while (got->size() < size) {
    if (::poll(&p, 1, 10000) <= 0) return false;
    ssize_t n = ::recv(fd, buffer.data(), std::min(buffer.size(), size - got->size()), 0);
    if (n <= 0) return false;
    got->append(buffer.data(), static_cast<size_t>(n));
  }
  return true;
}

// Reads until `done` holds for the bytes so far, or fails after 10 s
// without a byte or at the peer's end.
template <typename Done>
bool ReadUntil(int fd, std::string* got, Done done) {
  std::vector<char> buffer(64 * 1024);
  struct pollfd p = {fd, POLLIN, 0};
  while (!done(*got)) {
    if (::poll(&p, 1, 10000) <= 0) return false;
    ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n <= 0) return false;
    got->append(buffer.data(), static_cast<size_t>(n));
  }
  return true;
}

// An origin that speaks first: on each connection it sends the bytes it was
// given, ends its side (half-close), and then counts what the client sends
// until the client's end, which it reports.
class SpeakFirstOrigin {
 public:
  SpeakFirstOrigin() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    port_ = BindLoopback(fd_.get());
    thread_ = std::thread([this] {
      while (true) {
        int client = ::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
        if (client < 0) return;
        std::string say;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          say = next_;
        }
        workers_.emplace_back([this, client, say] {
          UniqueFd fd(client);
          SendAll(fd.get(), say);
          ::shutdown(fd.get(), SHUT_WR);
          std::string heard;
          const bool ended = ReadToEnd(fd.get(), &heard);
          std::lock_guard<std::mutex> lock(mutex_);
          counts_.push_back(ended ? static_cast<long>(heard.size()) : -1);
          heard_.notify_all();
        });
      }
    });
  }
  ~SpeakFirstOrigin() {
    ::shutdown(fd_.get(), SHUT_RDWR);
    thread_.join();
    for (std::thread& worker : workers_) worker.join();
  }
  uint16_t port() const { return port_; }
  void SayNext(std::string bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    next_ = std::move(bytes);
  }
  // What the n-th connection heard before the client's end (-1: no end
  // within 10 s), waiting up to 10 s for it.
  long Heard(size_t n) {
    std::unique_lock<std::mutex> lock(mutex_);
    heard_.wait_for(lock, std::chrono::seconds(10), [&] { return counts_.size() > n; });
    return counts_.size() > n ? counts_[n] : -2;
  }

 private:
  UniqueFd fd_;
  uint16_t port_ = 0;
  std::thread thread_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable heard_;
  std::string next_;
  std::vector<long> counts_;
};

class RelayStress : public ::testing::Test {
 protected:
  void StartProxy(uint16_t origin_port) {
    server_ = std::make_unique<ProxyServer>(AllowedTestOptions(origin_port));
    listen_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    port_ = BindLoopback(listen_.get());
    thread_ = std::thread([this] { EXPECT_TRUE(server_->Serve(listen_.get()).ok()); });
  }
  void TearDown() override {
    if (server_) server_->Stop();
    if (thread_.joinable()) thread_.join();
  }
  // A tunnel to the origin through CONNECT.
  UniqueFd Tunnel(uint16_t origin_port) {
    UniqueFd fd = ConnectLoopback(port_);
    const std::string connect =
        absl::StrCat("CONNECT allowed.test:", origin_port, " HTTP/1.1\r\n\r\n");
    EXPECT_TRUE(SendAll(fd.get(), connect));
    std::string answer;
    const std::string established = "HTTP/1.1 200 Connection established\r\n\r\n";
    EXPECT_TRUE(ReadExactly(fd.get(), established.size(), &answer));
    EXPECT_EQ(answer, established);
    return fd;
  }

  std::unique_ptr<ProxyServer> server_;
  UniqueFd listen_;
  uint16_t port_ = 0;
  std::thread thread_;
};

// The client uploads, then ends its side, with the last bytes or after
// the origin echoed them all; the origin echoes until that end and then
// closes: every byte comes back and the tunnel ends.
TEST_F(RelayStress, TheClientsEndReachesTheOrigin) {
  EchoOrigin origin;
  StartProxy(origin.port());
  int round = 0;
  for (int repeat = 0; repeat < 12; ++repeat) {
    for (size_t size : kSizes) {
      if (size > (1 << 20) && repeat % 4 != 0) continue;  // big ones less often
      for (bool end_after : {false, true}) {
        SCOPED_TRACE(absl::StrCat("round ", round++, ": ", size, " bytes, the end ",
                                  end_after ? "after them" : "with them"));
        const std::string payload = Bytes(size, static_cast<unsigned>(round));
        UniqueFd fd = Tunnel(origin.port());
        std::string echoed;
        std::thread sender([&] {
          EXPECT_TRUE(SendAll(fd.get(), payload));
          if (!end_after) ::shutdown(fd.get(), SHUT_WR);
        });
        if (end_after) {
          ASSERT_TRUE(ReadExactly(fd.get(), size, &echoed));
          sender.join();
          ::shutdown(fd.get(), SHUT_WR);
          ASSERT_TRUE(ReadToEnd(fd.get(), &echoed)) << "the origin never saw the end";
        } else {
          const bool ended = ReadToEnd(fd.get(), &echoed);
          sender.join();
          ASSERT_TRUE(ended) << "the origin never saw the end";
        }
        ASSERT_EQ(echoed.size(), payload.size());
        ASSERT_TRUE(echoed == payload) << "the bytes came back changed";
      }
    }
  }
}

// The origin speaks first and ends its side while the client has not yet
// sent anything: the client sees that end, then uploads and ends its own
// side, and the origin still receives every byte and the end. A relay
// that takes the origin's end for the end of the whole tunnel cuts the
// upload.
TEST_F(RelayStress, TheOriginsEndLeavesTheUploadOpen) {
  SpeakFirstOrigin origin;
  StartProxy(origin.port());
  size_t connection = 0;
  for (int repeat = 0; repeat < 6; ++repeat) {
    for (size_t size : kSizes) {
      if (size > (1 << 20) && repeat % 3 != 0) continue;
      SCOPED_TRACE(absl::StrCat("repeat ", repeat, ": ", size, " bytes each way"));
      const std::string download = Bytes(size, static_cast<unsigned>(connection) + 1);
      const std::string upload = Bytes(size, static_cast<unsigned>(connection) + 1000);
      origin.SayNext(download);
      UniqueFd fd = Tunnel(origin.port());
      std::string got;
      ASSERT_TRUE(ReadToEnd(fd.get(), &got)) << "the origin's end never arrived";
      ASSERT_EQ(got.size(), download.size());
      ASSERT_TRUE(got == download);
      ASSERT_TRUE(SendAll(fd.get(), upload)) << std::strerror(errno);
      ::shutdown(fd.get(), SHUT_WR);
      EXPECT_EQ(origin.Heard(connection), static_cast<long>(upload.size()))
          << "-1: the origin never saw the client's end; -2: it never answered";
      // Both ends passed: the proxy closes the tunnel.
      std::string after;
      EXPECT_TRUE(ReadToEnd(fd.get(), &after));
      EXPECT_TRUE(after.empty());
      ++connection;
    }
  }
}

// Plain HTTP: the body goes on and the origin sees the end right after it,
// whether the body came with the head, after it, or in pieces, and whatever
// the client sends behind it (another request) never reaches the origin.
TEST_F(RelayStress, APlainBodysEndReachesTheOriginAndNothingAfterIt) {
  EchoOrigin origin;
  StartProxy(origin.port());
  int round = 0;
  for (int repeat = 0; repeat < 8; ++repeat) {
    for (size_t size : {size_t{1}, size_t{5}, size_t{65537}, size_t{300 * 1024}}) {
      for (int split : {0, 1, 2}) {  // 0: with the head; 1: after it; 2: in two pieces
        SCOPED_TRACE(absl::StrCat("round ", round++, ": body of ", size, ", split ", split));
        const std::string body = Bytes(size, static_cast<unsigned>(round));
        const std::string head = absl::StrCat(
            "POST http://allowed.test:", origin.port(), "/up HTTP/1.1\r\nHost: allowed.test:",
            origin.port(), "\r\nContent-Length: ", size, "\r\n\r\n");
        const std::string behind = "GET http://other.test/ HTTP/1.1\r\n\r\n";
        UniqueFd fd = ConnectLoopback(port_);
        std::string echoed;
        if (split == 0) {
          ASSERT_TRUE(SendAll(fd.get(), head + body + behind));
        } else {
          const size_t first = split == 1 ? 0 : size / 2;
          ASSERT_TRUE(SendAll(fd.get(), head + body.substr(0, first)));
          // The origin echoed the head and the first piece: the proxy is
          // relaying.
          ASSERT_TRUE(ReadUntil(fd.get(), &echoed, [&](const std::string& got) {
            const size_t end = got.find("\r\n\r\n");
            return end != std::string::npos && got.size() - end - 4 >= first;
          })) << echoed.size();
          ASSERT_TRUE(SendAll(fd.get(), body.substr(first) + behind));
        }
        // The client keeps its side open: only the body's length ends it.
        ASSERT_TRUE(ReadToEnd(fd.get(), &echoed)) << "the origin never saw the end of the body";
        ASSERT_TRUE(absl::StartsWith(echoed, "POST /up HTTP/1.1\r\n"));
        ASSERT_TRUE(absl::EndsWith(echoed, "\r\n\r\n" + body)) << echoed.size();
        ASSERT_FALSE(absl::StrContains(echoed, "other.test"));
      }
    }
  }
}

}  // namespace
}  // namespace netproxy
}  // namespace garuda
