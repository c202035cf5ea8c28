#include "lib/netproxy/request.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace garuda {
namespace netproxy {
namespace {

TEST(ParseHttpHeadTest, Connect) {
  auto request = ParseHttpHead("CONNECT registry.npmjs.org:443 HTTP/1.1\r\n"
                               "Host: registry.npmjs.org:443\r\n\r\n");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->kind, ProxyRequest::Kind::kConnect);
  EXPECT_EQ(request->host, "registry.npmjs.org");
  EXPECT_EQ(request->port, 443);
  request = ParseHttpHead("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n");
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->host, "[::1]");
  EXPECT_EQ(request->port, 8443);
}

TEST(ParseHttpHeadTest, PlainHttpIsRewrittenToOriginForm) {
  auto request = ParseHttpHead(
      "POST http://a.test:8080/x?y=1 HTTP/1.1\r\nHost: a.test:8080\r\n"
      "Proxy-Authorization: Basic eA==\r\nConnection: keep-alive\r\n"
      "Content-Length: 5\r\n\r\n");
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->kind, ProxyRequest::Kind::kHttp);
  EXPECT_EQ(request->host, "a.test");
  EXPECT_EQ(request->port, 8080);
  EXPECT_EQ(request->body_length, 5u);
  EXPECT_EQ(request->forward_head,
            "POST /x?y=1 HTTP/1.1\r\nHost: a.test:8080\r\nContent-Length: 5\r\n"
            "Connection: close\r\n\r\n");
}

TEST(ParseHttpHeadTest, MalformedAndDisagreeingRequestsAreRefused) {
  for (const char* head : {
           "GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n",  // Host disagrees
           "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n",
           "GET /relative HTTP/1.1\r\nHost: a.test\r\n\r\n",
           "GET https://a.test/ HTTP/1.1\r\n\r\n",
           "GET http://user@a.test/ HTTP/1.1\r\n\r\n",
           "CONNECT a.test HTTP/1.1\r\n\r\n",  // no port
           "CONNECT a.test:0 HTTP/1.1\r\n\r\n",
           "CONNECT a.test:99999 HTTP/1.1\r\n\r\n",
           "CONNECT a.test:+443 HTTP/1.1\r\n\r\n",
           "CONNECT ::1:443 HTTP/1.1\r\n\r\n",
           "GET  http://a.test/ HTTP/1.1\r\n\r\n",
           "GET http://a.test/ HTTP/2\r\n\r\n",
           "GET http://a.test/ HTTP/1.1\r\nno colon\r\n\r\n",
           "POST http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
           "POST http://a.test/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
           "GET http://a.test/ HTTP/1.1\r\n",
       }) {
    EXPECT_FALSE(ParseHttpHead(head).ok()) << head;
  }
  auto disagree = ParseHttpHead("GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n");
  EXPECT_EQ(disagree.status().message(),
            "the Host header \"b.test\" does not match the request line's server \"a.test\"");
}

TEST(ParseHttpHeadTest, CapsAreResourceExhausted) {
  std::string head = "GET http://a.test/ HTTP/1.1\r\nX: " + std::string(kMaxLineBytes, 'a') +
                     "\r\n\r\n";
  EXPECT_TRUE(absl::IsResourceExhausted(ParseHttpHead(head).status()));
  std::string many = "GET http://a.test/ HTTP/1.1\r\n";
  for (size_t i = 0; i <= kMaxHeaders; ++i) many += "X: y\r\n";
  EXPECT_TRUE(absl::IsResourceExhausted(ParseHttpHead(many + "\r\n").status()));
}

TEST(ParseSocksTest, GreetingAndConnect) {
  EXPECT_EQ(*ParseSocksGreeting(std::string("\x05\x02\x02\x00", 4)), 4u);
  EXPECT_TRUE(absl::IsPermissionDenied(
      ParseSocksGreeting(std::string("\x05\x01\x02", 3)).status()));
  EXPECT_TRUE(absl::IsUnavailable(ParseSocksGreeting(std::string("\x05\x02\x00", 3)).status()));
  size_t used = 0;
  std::string name = std::string("\x05\x01\x00\x03\x06" "a.test" "\x01\xbb", 13);
  auto request = ParseSocksRequest(name, &used);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->host, "a.test");
  EXPECT_EQ(request->port, 443);
  EXPECT_EQ(used, 13u);
  std::string v4 = std::string("\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x50", 10);
  request = ParseSocksRequest(v4, &used);
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->host, "127.0.0.1");
  EXPECT_EQ(request->port, 80);
  EXPECT_TRUE(absl::IsUnimplemented(
      ParseSocksRequest(std::string("\x05\x03\x00\x01\x7f\x00\x00\x01\x00\x50", 10), &used)
          .status()));  // UDP ASSOCIATE
  EXPECT_TRUE(absl::IsUnavailable(ParseSocksRequest(name.substr(0, 8), &used).status()));
  EXPECT_FALSE(ParseSocksRequest(std::string("\x05\x01\x00\x03\x00\x00\x50", 7), &used).ok());
}

}  // namespace
}  // namespace netproxy
}  // namespace garuda
