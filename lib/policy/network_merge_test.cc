// The allow list's merge (lib/policy/network_merge.h): a project narrows,
// never widens; the person's files bound each other.
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/json_message.h"
#include "lib/policy/merge.h"
#include "lib/policy/merge_test_fixture.h"

namespace garuda {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> List(
    const google::protobuf::RepeatedPtrField<std::string>& list) {
  return {list.begin(), list.end()};
}

class NetworkMergeTest : public MergeTest {
 protected:
  bool HasNotice(const MergedSettings& merged, const std::string& part) {
    for (const std::string& notice : merged.notices) {
      if (absl::StrContains(notice, part)) return true;
    }
    return false;
  }
};

TEST_F(NetworkMergeTest, AListOfThePersonGivesTheAllowListWithDefaultPorts) {
  sources_.user_settings = Parse(
      R"({"sandbox":{"allowedDomains":["GitHub.com.","*.pythonhosted.org"]}})");
  MergedSettings merged = Merge();
  EXPECT_EQ(merged.network_access, NetworkAccess::kAllowList);
  EXPECT_FALSE(merged.settings.sandbox().network());
  EXPECT_THAT(List(merged.settings.sandbox().allowed_domains()),
              ElementsAre("github.com", "*.pythonhosted.org"));
  EXPECT_THAT(merged.settings.sandbox().allowed_ports(), ElementsAre(80, 443));
  // Control: without the list the network is off.
  sources_.user_settings.Clear();
  EXPECT_EQ(Merge().network_access, NetworkAccess::kOff);
}

TEST_F(NetworkMergeTest, AProjectCannotAddADomainThePersonDoesNotAllow) {
  sources_.user_settings =
      Parse(R"({"sandbox":{"allowedDomains":["allowed.test","*.npmjs.org"]}})");
  sources_.project_settings = Parse(
      R"({"sandbox":{"allowedDomains":["allowed.test","evil.test",
                                       "registry.npmjs.org"]}})");
  MergedSettings merged = Merge();
  EXPECT_EQ(merged.network_access, NetworkAccess::kAllowList);
  EXPECT_THAT(List(merged.settings.sandbox().allowed_domains()),
              ElementsAre("allowed.test", "registry.npmjs.org"));
  EXPECT_TRUE(HasNotice(merged, "/p/.garuda/settings.json: "
                                "sandbox.allowedDomains \"evil.test\" is "
                                "ignored"));
  // Control: the same domain in the person's settings is allowed.
  sources_.user_settings = Parse(
      R"({"sandbox":{"allowedDomains":["allowed.test","evil.test",
                                       "registry.npmjs.org"]}})");
  EXPECT_THAT(List(Merge().settings.sandbox().allowed_domains()),
              ElementsAre("allowed.test", "evil.test", "registry.npmjs.org"));
}

TEST_F(NetworkMergeTest, AProjectListNarrowsTheFullNetworkButNotTheOff) {
  sources_.user_settings = Parse(R"({"sandbox":{"network":true}})");
  sources_.project_settings =
      Parse(R"({"sandbox":{"allowedDomains":["github.com"]}})");
  MergedSettings merged = Merge();
  EXPECT_EQ(merged.network_access, NetworkAccess::kAllowList);
  EXPECT_FALSE(merged.settings.sandbox().network());
  // Network off: the project's list would widen it.
  sources_.user_settings.Clear();
  merged = Merge();
  EXPECT_EQ(merged.network_access, NetworkAccess::kOff);
  EXPECT_TRUE(HasNotice(merged, "sandbox.allowedDomains is ignored"));
  // A project's network false turns the person's list off.
  sources_.user_settings =
      Parse(R"({"sandbox":{"allowedDomains":["github.com"]}})");
  sources_.project_settings = Parse(R"({"sandbox":{"network":false}})");
  EXPECT_EQ(Merge().network_access, NetworkAccess::kOff);
  // And a project's network true does not widen the list to everything.
  sources_.project_settings = Parse(R"({"sandbox":{"network":true}})");
  merged = Merge();
  EXPECT_EQ(merged.network_access, NetworkAccess::kAllowList);
  EXPECT_FALSE(merged.settings.sandbox().network());
}

TEST_F(NetworkMergeTest, ThePersonsListsBoundEachOtherAndAPolicyIsNamed) {
  sources_.managed_policy =
      Parse(R"({"sandbox":{"allowedDomains":["*.github.com","pypi.org"]}})");
  sources_.user_settings = Parse(
      R"({"sandbox":{"allowedDomains":["api.github.com","example.com"],
                     "network":false}})");
  // Network false in the user's settings: off, the lists named.
  MergedSettings merged = Merge();
  EXPECT_EQ(merged.network_access, NetworkAccess::kOff);
  EXPECT_TRUE(HasNotice(merged, "/etc/garuda/policy.json: "
                                "sandbox.allowedDomains is ignored"));
  sources_.user_settings = Parse(
      R"({"sandbox":{"allowedDomains":["api.github.com","example.com"]}})");
  merged = Merge();
  EXPECT_EQ(merged.network_access, NetworkAccess::kAllowList);
  EXPECT_THAT(List(merged.settings.sandbox().allowed_domains()),
              ElementsAre("api.github.com"));
  EXPECT_EQ(merged.allow_list_policy_source, "/etc/garuda/policy.json");
  // A policy's network true does not undo the user's narrower list.
  sources_.managed_policy = Parse(R"({"sandbox":{"network":true}})");
  merged = Merge();
  EXPECT_EQ(merged.network_access, NetworkAccess::kAllowList);
  EXPECT_EQ(merged.allow_list_policy_source, "");
}

TEST_F(NetworkMergeTest, DenialsAddUpAndPortsOnlyNarrow) {
  sources_.user_settings = Parse(
      R"({"sandbox":{"allowedDomains":["*.example.com"],
                     "deniedDomains":["a.example.com"],
                     "allowedPorts":[443, 8443]}})");
  sources_.project_settings = Parse(
      R"({"sandbox":{"deniedDomains":["b.example.com"],
                     "allowedPorts":[443, 22]}})");
  MergedSettings merged = Merge();
  EXPECT_THAT(List(merged.settings.sandbox().denied_domains()),
              ElementsAre("a.example.com", "b.example.com"));
  EXPECT_THAT(merged.settings.sandbox().allowed_ports(), ElementsAre(443));
  EXPECT_TRUE(HasNotice(merged, "sandbox.allowedPorts 22 is ignored"));
}

TEST_F(NetworkMergeTest, BadEntriesAreErrorsNamingTheFile) {
  sources_.project_settings =
      Parse(R"({"sandbox":{"deniedDomains":["ok.test","*bad.test"]}})");
  absl::StatusOr<MergedSettings> merged = MergeSettings(sources_);
  ASSERT_FALSE(merged.ok());
  EXPECT_TRUE(absl::StrContains(
      merged.status().message(),
      "/p/.garuda/settings.json: sandbox.deniedDomains[1]: \"*bad.test\""))
      << merged.status();
  sources_.project_settings.Clear();
  sources_.user_settings = Parse(
      R"({"sandbox":{"network":true,"allowedDomains":["github.com"]}})");
  merged = MergeSettings(sources_);
  ASSERT_FALSE(merged.ok());
  EXPECT_TRUE(absl::StrContains(merged.status().message(),
                                "say two things"));
  sources_.user_settings =
      Parse(R"({"sandbox":{"allowedDomains":["a.test"],"allowedPorts":[0]}})");
  EXPECT_FALSE(MergeSettings(sources_).ok());
}

}  // namespace
}  // namespace garuda

namespace garuda {
namespace {

// An MCP server's own allow list goes with the person's ports and denied
// hosts even when commands have no list (the control: with a list they
// are the same as the list's).
TEST_F(NetworkMergeTest, PortsAndDeniedHostsAreKeptWithoutAnAllowList) {
  sources_.user_settings = Parse(
      R"({"sandbox":{"allowedPorts":[8443],"deniedDomains":["evil.test"]}})");
  MergedSettings merged = Merge();
  EXPECT_EQ(merged.network_access, NetworkAccess::kOff);
  EXPECT_TRUE(merged.settings.sandbox().allowed_ports().empty());
  EXPECT_THAT(merged.network_ports, ElementsAre(8443));
  EXPECT_THAT(merged.network_denied_domains, ElementsAre("evil.test"));
  sources_.user_settings = Parse(
      R"({"sandbox":{"allowedDomains":["a.test"],"allowedPorts":[8443],)"
      R"("deniedDomains":["evil.test"]}})");
  merged = Merge();
  EXPECT_THAT(merged.settings.sandbox().allowed_ports(), ElementsAre(8443));
  EXPECT_THAT(merged.network_ports, ElementsAre(8443));
  EXPECT_THAT(merged.network_denied_domains, ElementsAre("evil.test"));
}

}  // namespace
}  // namespace garuda
