#include "tests/netproxy/origin.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace garuda {
namespace testing {

Origin::Origin() {
  fd_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  ::setsockopt(fd_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  EXPECT_EQ(::bind(fd_.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  socklen_t length = sizeof address;
  ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  EXPECT_EQ(::listen(fd_.get(), 64), 0);
  thread_ = std::thread([this] {
    while (true) {
      int client = ::accept(fd_.get(), nullptr, nullptr);
      if (client < 0) return;
      ++requests_;
      std::string got;
      char buffer[4096];
      while (got.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        got.append(buffer, n);
      }
      std::string reply =
          "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nhello from origin\n";
      ::send(client, reply.data(), reply.size(), MSG_NOSIGNAL);
      ::close(client);
    }
  });
}

Origin::~Origin() {
  ::shutdown(fd_.get(), SHUT_RDWR);
  thread_.join();
}

}  // namespace testing
}  // namespace garuda
