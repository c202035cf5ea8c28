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

}  // namespace
}  // namespace garuda
