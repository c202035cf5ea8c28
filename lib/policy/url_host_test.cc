#include "lib/policy/mcp_servers.h"

#include "gtest/gtest.h"

namespace garuda {
namespace {

TEST(UrlHostTest, TheHostAsTheProxyWillBeAskedForIt) {
  EXPECT_EQ(*UrlHost("https://API.Example.com/mcp"), "api.example.com");
  EXPECT_EQ(*UrlHost("https://api.example.com:8443/mcp?x=1"),
            "api.example.com");
  EXPECT_EQ(*UrlHost("http://mcp.example.com"), "mcp.example.com");
  EXPECT_EQ(*UrlHost("https://[2001:db8::1]:443/mcp"), "2001:db8::1");
  // User info is not the host: the one after the last '@' is.
  EXPECT_EQ(*UrlHost("https://allowed.example@other.example/mcp"),
            "other.example");
  EXPECT_EQ(*UrlHost("https://other.example/a@allowed.example"),
            "other.example");
}

TEST(UrlHostTest, RefusesWhatHasNoHost) {
  EXPECT_FALSE(UrlHost("ftp://example.com/").ok());
  EXPECT_FALSE(UrlHost("https:///mcp").ok());
  EXPECT_FALSE(UrlHost("https://[2001:db8::1/mcp").ok());
  EXPECT_FALSE(UrlHost("example.com/mcp").ok());
}

}  // namespace
}  // namespace garuda
