#include "sandbox/probe.h"

#include <seccomp.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "sandbox/cgroup.h"

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

TEST(ProbeTest, ReportsTheCgroupsOfTheLimits) {
  ::unsetenv(kPretendNoSandboxVariable);
  ProbeReport report = ProbeSandbox({});
  int lines = 0;
  for (const ProbeFeature& feature : report.features) {
    bool memory = feature.name.rfind("memory limit in a cgroup", 0) == 0;
    bool pids = feature.name.rfind("process limit in a cgroup", 0) == 0;
    if (!memory && !pids) continue;
    ++lines;
    EXPECT_FALSE(feature.required);  // the rlimits remain without them
    CgroupPlace place = FindCgroupPlace(memory ? CgroupController::kMemory
                                               : CgroupController::kPids);
    // A place that is not there never shows as available; one that is
    // there is proved by making a cgroup and moving a process into it.
    if (!place.available) {
      EXPECT_FALSE(feature.available) << feature.name;
    }
    if (feature.available) {
      EXPECT_NE(feature.detail.find(place.parent), std::string::npos);
    } else {
      EXPECT_FALSE(feature.reason.empty()) << feature.name;
      EXPECT_FALSE(feature.fix.empty()) << feature.name;
    }
  }
  EXPECT_EQ(lines, 2) << report.ToText();
  // The quick probe (before each run) skips them.
  for (const ProbeFeature& feature :
       ProbeSandbox(ProbeOptions::Quick()).features) {
    EXPECT_EQ(feature.name.find("cgroup"), std::string::npos);
  }
}

// What a new staging view with backend "auto" runs: the quick probe with
// the overlay check, and nothing of the full probe's canaries or cgroups.
TEST(ProbeTest, TheOverlayCheckAloneAddsNoCanaryOrCgroup) {
  ::unsetenv(kPretendNoSandboxVariable);
  ProbeReport full = ProbeSandbox({});
  ProbeOptions options = ProbeOptions::Quick();
  options.overlay = true;
  ProbeReport quick = ProbeSandbox(options);
  EXPECT_TRUE(quick.SandboxWorks()) << quick.ToText();
  // The same answer as the full probe's, from the same check.
  EXPECT_EQ(quick.OverlayWorks(), full.OverlayWorks()) << full.ToText();
  int overlay_lines = 0;
  for (const ProbeFeature& feature : quick.features) {
    if (feature.name == "overlayfs in a user namespace") ++overlay_lines;
    EXPECT_EQ(feature.name.find("canary"), std::string::npos);
    EXPECT_EQ(feature.name.find("cgroup"), std::string::npos);
  }
  EXPECT_EQ(overlay_lines, 1) << quick.ToText();
  // Control: the full probe has both, and the quick one without the
  // overlay check has no overlay line (OverlayWorks() false, so "auto"
  // would never take overlay from a probe that did not check).
  int canaries = 0;
  for (const ProbeFeature& feature : full.features) {
    if (feature.name.rfind("canary", 0) == 0) ++canaries;
  }
  EXPECT_EQ(canaries, 2);
  ProbeReport bare = ProbeSandbox(ProbeOptions::Quick());
  EXPECT_FALSE(bare.OverlayWorks());
  for (const ProbeFeature& feature : bare.features) {
    EXPECT_NE(feature.name, "overlayfs in a user namespace");
  }
}

// Runs the quick probe (with the overlay check) in a child, after a filter
// that refuses to load further filters when `refuse` (the machine without
// seccomp, as far as the probe can tell). Exit code bits: 1 the sandbox
// works, 2 the seccomp line is available, 4 its reason names the refused
// load, 8 the overlay line is available.
int QuickProbeInChild(bool refuse) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (refuse) {
      scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ALLOW);
      ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(prctl), 1,
                         SCMP_A0(SCMP_CMP_EQ, PR_SET_SECCOMP));
      ::seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(seccomp), 0);
      if (ctx == nullptr || ::seccomp_load(ctx) != 0) ::_exit(64);
    }
    ProbeOptions options = ProbeOptions::Quick();
    options.overlay = true;
    ProbeReport report = ProbeSandbox(options);
    int code = report.SandboxWorks() ? 1 : 0;
    for (const ProbeFeature& feature : report.features) {
      if (feature.name == "seccomp") {
        if (feature.available) code |= 2;
        if (feature.reason.find("prctl(PR_SET_SECCOMP): Operation not "
                                "permitted") != std::string::npos &&
            !feature.fix.empty()) {
          code |= 4;
        }
      }
    }
    if (report.OverlayWorks()) code |= 8;
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The quick probe checks seccomp in its namespace child, not in a fork of
// its own: a filter that cannot be loaded there is reported missing, with
// the reason, and the sandbox does not work.
TEST(ProbeTest, SeccompRefusedInTheNamespaceChildIsMissing) {
  ::unsetenv(kPretendNoSandboxVariable);
  bool overlay = ProbeSandbox({}).OverlayWorks();
  int refused = QuickProbeInChild(true);
  ASSERT_NE(refused, 64) << "the test's own filter did not load";
  EXPECT_EQ(refused & 1, 0);  // the sandbox does not work
  EXPECT_EQ(refused & 2, 0);  // seccomp missing
  EXPECT_EQ(refused & 4, 4);  // with the reason of the refused load
  EXPECT_EQ((refused & 8) != 0, overlay);  // the overlay answer unchanged
  // Control: without the refusing filter, the same probe passes.
  int allowed = QuickProbeInChild(false);
  EXPECT_EQ(allowed & 3, 3);
  EXPECT_EQ((allowed & 8) != 0, overlay);
}

TEST(ProbeTest, OverlayWorksReadsTheOverlayLineOnly) {
  ProbeReport report;
  EXPECT_FALSE(report.OverlayWorks());  // not checked
  ProbeFeature other{"mounts in a user namespace"};
  other.available = true;
  report.features.push_back(other);
  ProbeFeature overlay{"overlayfs in a user namespace"};
  overlay.required = false;
  overlay.reason = "mount overlay: Operation not permitted";
  report.features.push_back(overlay);
  EXPECT_FALSE(report.OverlayWorks());  // checked, failed
  report.features.back().available = true;
  EXPECT_TRUE(report.OverlayWorks());
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
  EXPECT_TRUE(ProbeSandbox(ProbeOptions::Quick()).SandboxWorks());
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
