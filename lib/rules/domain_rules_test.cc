#include "lib/rules/domain_rules.h"

#include "gtest/gtest.h"

namespace garuda {
namespace netproxy {
namespace {

using Verdict = DomainRules::Verdict;

DomainRules Rules(std::vector<std::string> allowed, std::vector<std::string> denied = {}) {
  absl::StatusOr<DomainRules> rules = DomainRules::Create(allowed, denied);
  EXPECT_TRUE(rules.ok()) << rules.status();
  return rules.ok() ? *rules : DomainRules();
}

TEST(DomainRulesTest, ANameMatchesItselfAWildcardItsSubdomainsOnly) {
  DomainRules rules = Rules({"github.com", "*.pythonhosted.org"});
  EXPECT_EQ(rules.Check("github.com"), Verdict::kAllowed);
  EXPECT_EQ(rules.Check("GitHub.COM."), Verdict::kAllowed);
  EXPECT_EQ(rules.Check("api.github.com"), Verdict::kNotListed);
  EXPECT_EQ(rules.Check("evilgithub.com"), Verdict::kNotListed);
  EXPECT_EQ(rules.Check("github.com.evil.test"), Verdict::kNotListed);
  EXPECT_EQ(rules.Check("files.pythonhosted.org"), Verdict::kAllowed);
  EXPECT_EQ(rules.Check("a.b.pythonhosted.org"), Verdict::kAllowed);
  EXPECT_EQ(rules.Check("pythonhosted.org"), Verdict::kNotListed);
  EXPECT_EQ(rules.Check("xpythonhosted.org"), Verdict::kNotListed);
}

TEST(DomainRulesTest, DenyWins) {
  DomainRules rules = Rules({"*.example.com"}, {"secret.example.com"});
  EXPECT_EQ(rules.Check("www.example.com"), Verdict::kAllowed);
  EXPECT_EQ(rules.Check("secret.example.com"), Verdict::kDenied);
  EXPECT_EQ(rules.Check("SECRET.example.com."), Verdict::kDenied);
}

TEST(DomainRulesTest, AnIpLiteralIsAnEntryOfItsOwn) {
  DomainRules rules = Rules({"10.0.0.8", "::1"});
  EXPECT_EQ(rules.Check("10.0.0.8"), Verdict::kAllowed);
  EXPECT_EQ(rules.Check("[::1]"), Verdict::kAllowed);
  EXPECT_EQ(rules.Check("0:0::1"), Verdict::kAllowed);
  EXPECT_EQ(rules.Check("10.0.0.9"), Verdict::kNotListed);
  // A name is not its address, nor the other way round.
  EXPECT_EQ(Rules({"github.com"}).Check("140.82.112.3"), Verdict::kNotListed);
}

TEST(DomainRulesTest, NotHostNamesAreNeverAllowed) {
  DomainRules rules = Rules({"*.example.com"});
  for (const char* host : {"", " ", "a b.example.com", "x..example.com",
                           "-x.example.com", "x.example.com\n", "x.example.com/"}) {
    EXPECT_EQ(rules.Check(host), Verdict::kNotListed) << host;
  }
  EXPECT_EQ(rules.Check(std::string("a.example.com\0.evil", 19)), Verdict::kNotListed);
}

TEST(DomainRulesTest, BadEntriesNameTheListAndEntry) {
  auto error = [](std::vector<std::string> allowed, std::vector<std::string> denied) {
    auto rules = DomainRules::Create(allowed, denied);
    return rules.ok() ? std::string("ok") : std::string(rules.status().message());
  };
  EXPECT_EQ(error({"a.test", "*example.com"}, {}),
            "sandbox.allowedDomains[1]: \"*example.com\": a wildcard is written \"*.\" "
            "before a name (\"*.example.com\": its subdomains)");
  EXPECT_EQ(error({}, {"com"}),
            "sandbox.deniedDomains[0]: \"com\": a top-level name alone would allow too "
            "much; name the host");
  EXPECT_EQ(error({"github.com:443"}, {}),
            "sandbox.allowedDomains[0]: \"github.com:443\": a port is not part of an "
            "entry (see sandbox.allowedPorts)");
  EXPECT_EQ(error({"*.10.0.0.1"}, {}),
            "sandbox.allowedDomains[0]: \"*.10.0.0.1\": an IP address has no subdomains");
  EXPECT_EQ(error({"bad name.test"}, {}),
            "sandbox.allowedDomains[0]: \"bad name.test\": not a host name or an IP address");
}

}  // namespace
}  // namespace netproxy
}  // namespace garuda

namespace garuda {
namespace netproxy {
namespace {

// For the merge of several files' lists (lib/policy/network_merge.h).
TEST(DomainRulesTest, EntriesNormalizeAndCoverOnlyWhatTheyAllow) {
  EXPECT_EQ(*DomainRules::NormalizeEntry("*.Example.COM."), "*.example.com");
  EXPECT_EQ(*DomainRules::NormalizeEntry("[::0001]"), "::1");
  EXPECT_FALSE(DomainRules::NormalizeEntry("*example.com").ok());
  EXPECT_FALSE(DomainRules::NormalizeEntry("example.com:443").ok());
  EXPECT_TRUE(DomainRules::EntryCovers("*.github.com", "api.github.com"));
  EXPECT_TRUE(DomainRules::EntryCovers("*.github.com", "*.api.github.com"));
  EXPECT_TRUE(DomainRules::EntryCovers("*.github.com", "*.github.com"));
  EXPECT_TRUE(DomainRules::EntryCovers("github.com", "github.com"));
  // Negative controls: a name does not cover its subdomains, a wildcard not
  // its own name nor a look-alike, nor a wider wildcard.
  EXPECT_FALSE(DomainRules::EntryCovers("github.com", "api.github.com"));
  EXPECT_FALSE(DomainRules::EntryCovers("*.github.com", "github.com"));
  EXPECT_FALSE(DomainRules::EntryCovers("*.github.com", "evilgithub.com"));
  EXPECT_FALSE(DomainRules::EntryCovers("*.api.github.com", "*.github.com"));
}

}  // namespace
}  // namespace netproxy
}  // namespace garuda
