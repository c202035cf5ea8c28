#include "sandbox/probe.h"

#include <stdlib.h>

#include "gtest/gtest.h"

namespace garuda {
namespace {

TEST(ProbeTest, ThisMachineHasAWorkingSandbox) {
  ::unsetenv(kPretendNoSandboxVariable);
  ProbeReport report = ProbeSandbox({});
  EXPECT_TRUE(report.SandboxWorks()) << report.ToText();
  EXPECT_GE(report.landlock_abi, 1);
  // The canaries ran and passed.
  int canaries = 0;
  for (const ProbeFeature& feature : report.features) {
    if (feature.name.rfind("canary", 0) == 0) {
      ++canaries;
      EXPECT_TRUE(feature.available) << feature.name << ": " << feature.reason;
    }
  }
  EXPECT_EQ(canaries, 2);
  EXPECT_NE(report.ToJson().find("\"sandbox\":true"), std::string::npos);
}

TEST(ProbeTest, PretendNoSandboxGivesReasonAndFix) {
  ::setenv(kPretendNoSandboxVariable, "1", 1);
  ProbeReport report = ProbeSandbox({});
  ::unsetenv(kPretendNoSandboxVariable);
  EXPECT_FALSE(report.SandboxWorks());
  ASSERT_NE(report.FirstMissing(), nullptr);
  EXPECT_FALSE(report.FirstMissing()->reason.empty());
  EXPECT_FALSE(report.FirstMissing()->fix.empty());
  EXPECT_NE(report.ToText().find("does NOT work"), std::string::npos);
  // Negative control: only "1" pretends.
  ::setenv(kPretendNoSandboxVariable, "0", 1);
  ProbeOptions quick;
  quick.full = false;
  EXPECT_TRUE(ProbeSandbox(quick).SandboxWorks());
  ::unsetenv(kPretendNoSandboxVariable);
}

TEST(ProbeTest, ExplainsEachCauseOfMissingUserNamespaces) {
  NamespaceSettings plain;
  plain.max_user_namespaces = "15000";
  plain.apparmor_restrict_userns = "0";
  plain.kernel_release = "4.9.0";
  struct Case {
    NamespaceSettings settings;
    const char* reason;
    const char* fix;
  };
  std::vector<Case> cases;
  NamespaceSettings zero = plain;
  zero.max_user_namespaces = "0";
  cases.push_back({zero, "max_user_namespaces is 0", "sysctl -w user."});
  NamespaceSettings ubuntu = plain;
  ubuntu.apparmor_restrict_userns = "1";
  cases.push_back(
      {ubuntu, "AppArmor", "apparmor_restrict_unprivileged_userns=0"});
  NamespaceSettings debian = plain;
  debian.unprivileged_userns_clone = "0";
  cases.push_back({debian, "unprivileged_userns_clone is 0",
                   "unprivileged_userns_clone=1"});
  NamespaceSettings docker = plain;
  docker.in_container = true;
  cases.push_back({docker, "Docker", "seccomp=unconfined"});
  cases.push_back({plain, "", "this is 4.9.0"});
  for (const Case& c : cases) {
    ProbeFeature feature{"user namespaces"};
    ExplainUserNamespaces(c.settings, &feature);
    EXPECT_NE(feature.reason.find(c.reason), std::string::npos)
        << feature.reason;
    EXPECT_NE(feature.fix.find(c.fix), std::string::npos) << feature.fix;
  }
  // As root, Debian's switch does not apply (root may make namespaces).
  debian.root = true;
  ProbeFeature feature{"user namespaces"};
  ExplainUserNamespaces(debian, &feature);
  EXPECT_EQ(feature.reason.find("unprivileged_userns_clone"),
            std::string::npos);
}

}  // namespace
}  // namespace garuda
