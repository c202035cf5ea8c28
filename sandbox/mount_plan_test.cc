#include "sandbox/mount_plan.h"

#include <stdlib.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "sandbox/stored_walk.h"

namespace garuda {
namespace {

class MountPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "mpXXXXXX");
    char* made = ::mkdtemp(templ.data());
    ASSERT_NE(made, nullptr);
    char real[4096];
    ASSERT_NE(::realpath(made, real), nullptr);
    root_ = real;
    project_ = JoinPath(root_, "project");
    ASSERT_TRUE(MakeDirectories(project_ + "/.git/hooks", 0755).ok());
    ASSERT_TRUE(WriteFileAtomically(project_ + "/key", "k", 0644).ok());
    policy_.set_project(project_);
    policy_.set_project_writable(true);
    policy_.add_read_only_paths("/usr");
  }
  std::string root_, project_;
  SandboxPolicy policy_;
};

TEST_F(MountPlanTest, OrderPutsDeniedPathsLast) {
  policy_.add_denied_paths(".git/hooks");
  policy_.add_denied_paths("key");
  policy_.add_denied_paths("missing");  // nothing to hide
  policy_.add_denied_paths("key/");     // a trailing slash is fine
  auto plan = BuildMountPlan(policy_);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_GE(plan->steps.size(), 7u);
  EXPECT_EQ(plan->steps[0].target, "/usr");
  EXPECT_EQ(plan->steps[1].kind, MountStep::Kind::kProc);
  EXPECT_EQ(plan->steps[2].kind, MountStep::Kind::kDev);
  EXPECT_EQ(plan->steps[3].target, "/tmp");
  EXPECT_EQ(plan->steps[4].target, project_);
  EXPECT_TRUE(plan->steps[4].writable);
  EXPECT_EQ(plan->steps[5].kind, MountStep::Kind::kDenyDir);
  // "key" and "key/" are one path, denied once.
  EXPECT_EQ(plan->steps[6].kind, MountStep::Kind::kDenyFile);
  EXPECT_EQ(plan->steps[6].target, project_ + "/key");
  EXPECT_EQ(plan->steps.size(), 7u);
  EXPECT_EQ(plan->working_directory, project_);
  EXPECT_EQ(plan->writable,
            (std::vector<std::string>{"/tmp", "/dev", project_}));
}

TEST_F(MountPlanTest, ReadOnlyProjectIsNotWritable) {
  policy_.set_project_writable(false);
  auto plan = BuildMountPlan(policy_);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->writable, (std::vector<std::string>{"/tmp", "/dev"}));
}

TEST_F(MountPlanTest, SystemLinksAreCopiedAsLinks) {
  std::string link = JoinPath(root_, "bin");
  ASSERT_EQ(::symlink("usr/bin", link.c_str()), 0);
  policy_.add_read_only_paths(link);
  policy_.add_read_only_paths(JoinPath(root_, "absent"));  // skipped
  auto plan = BuildMountPlan(policy_);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->steps[1].kind, MountStep::Kind::kSymlink);
  EXPECT_EQ(plan->steps[1].source, "usr/bin");
  EXPECT_EQ(plan->steps[2].kind, MountStep::Kind::kProc);
}

TEST_F(MountPlanTest, DeniedPathThroughALinkIsRefused) {
  std::string outside = JoinPath(root_, "outside");
  ASSERT_TRUE(MakeDirectories(outside, 0755).ok());
  ASSERT_EQ(::symlink(outside.c_str(), (project_ + "/.garuda").c_str()), 0);
  policy_.add_denied_paths(".garuda");
  auto plan = BuildMountPlan(policy_);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find(".garuda"), absl::string_view::npos);
}

TEST_F(MountPlanTest, MistakesNameThePath) {
  policy_.add_writable_paths(JoinPath(root_, "nope"));
  auto plan = BuildMountPlan(policy_);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("nope"), absl::string_view::npos);

  policy_.clear_writable_paths();
  policy_.add_read_only_paths("relative");
  plan = BuildMountPlan(policy_);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("relative"), absl::string_view::npos);

  policy_.clear_read_only_paths();
  policy_.set_project("project");
  EXPECT_FALSE(BuildMountPlan(policy_).ok());
}

TEST_F(MountPlanTest, TheWholeFileSystemIsNeverWritable) {
  policy_.add_writable_paths("/");
  EXPECT_FALSE(BuildMountPlan(policy_).ok());
  policy_.clear_writable_paths();
  policy_.set_project("/");
  EXPECT_FALSE(BuildMountPlan(policy_).ok());
  // Negative control.
  policy_.set_project(project_);
  EXPECT_TRUE(BuildMountPlan(policy_).ok());
}

// Issue 13, point 1: a writable path is opened beneath its base without
// following links: a link planted in the project (or any link on the way
// of an absolute path) is refused with the reason; the control, the same
// folder named without the link, is bound.
TEST_F(MountPlanTest, WritablePathThroughALinkIsRefused) {
  std::string outside = JoinPath(root_, "outside");
  ASSERT_TRUE(MakeDirectories(outside + "/sub", 0755).ok());
  ASSERT_EQ(::symlink(outside.c_str(), (project_ + "/link").c_str()), 0);
  ASSERT_EQ(::symlink("..", (project_ + "/up").c_str()), 0);
  for (const std::string& given :
       {std::string("link"), std::string("link/sub"), std::string("up/outside"),
        project_ + "/link/sub", JoinPath(root_, "project/link")}) {
    policy_.clear_writable_paths();
    policy_.add_writable_paths(given);
    auto plan = BuildMountPlan(policy_);
    ASSERT_FALSE(plan.ok()) << given;
    EXPECT_NE(plan.status().message().find("symbolic link"),
              absl::string_view::npos)
        << plan.status();
  }
  // ".." out of the project is refused too, link or not.
  policy_.clear_writable_paths();
  policy_.add_writable_paths("../outside");
  EXPECT_FALSE(BuildMountPlan(policy_).ok());
  // Control: the real folder.
  policy_.clear_writable_paths();
  policy_.add_writable_paths(outside + "/sub");
  auto plan = BuildMountPlan(policy_);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->writable.back(), outside + "/sub");
}

// Issue 13, point 8: denied by what a file holds, not by one name each.
TEST_F(MountPlanTest, DeniedPatternsAndPrivateFilesAreExpanded) {
  std::string etc = JoinPath(root_, "etc");
  ASSERT_TRUE(MakeDirectories(etc + "/ssl/private", 0755).ok());
  ASSERT_TRUE(MakeDirectories(etc + "/public/deep", 0755).ok());
  for (const char* name : {"shadow", "shadow-", "gshadow-", "passwd"}) {
    ASSERT_TRUE(WriteFileAtomically(JoinPath(etc, name), "x", 0644).ok());
  }
  ASSERT_TRUE(
      WriteFileAtomically(etc + "/public/deep/token", "secret", 0600).ok());
  ASSERT_EQ(::chmod((etc + "/ssl/private").c_str(), 0700), 0);
  ASSERT_EQ(::symlink("shadow", (etc + "/shadow.link").c_str()), 0);
  SandboxPolicy policy = policy_;
  policy.add_denied_paths(etc + "/*shadow*");
  policy.add_deny_private_under(etc);
  auto denied = ExpandDeniedPaths(policy, project_);
  ASSERT_TRUE(denied.ok()) << denied.status();
  EXPECT_EQ(*denied,
            (std::vector<std::string>{
                etc + "/gshadow-", etc + "/public/deep/token", etc + "/shadow",
                etc + "/shadow-", etc + "/ssl/private"}));
  // Control: without the pattern and the walk, only the one name.
  SandboxPolicy by_name = policy_;
  by_name.add_denied_paths(etc + "/shadow");
  denied = ExpandDeniedPaths(by_name, project_);
  ASSERT_TRUE(denied.ok());
  EXPECT_EQ(*denied, (std::vector<std::string>{etc + "/shadow"}));
}

// Issue 13, point 9: nothing under /run is bound with the network off.
TEST_F(MountPlanTest, NoHostSocketsWithTheNetworkOff) {
  policy_.add_read_only_paths("/run");
  auto bound = [&](bool network) {
    policy_.set_network(network);
    auto plan = BuildMountPlan(policy_);
    EXPECT_TRUE(plan.ok()) << plan.status();
    for (const MountStep& step : plan->steps) {
      if (step.target == "/run") return true;
    }
    return false;
  };
  EXPECT_FALSE(bound(false));
  EXPECT_TRUE(bound(true)) << "control: with the network on it is bound";
}

// Issue 13, point 4: .git is bound on itself and its config read-only,
// beneath the project without links; a .git that is a link is refused.
TEST_F(MountPlanTest, GitIsPinnedAndItsConfigReadOnly) {
  ASSERT_TRUE(WriteFileAtomically(project_ + "/.git/config", "", 0644).ok());
  policy_.add_pinned_paths(".git");
  policy_.add_read_only_project_paths(".git/config");
  policy_.add_read_only_project_paths(".git/info/");  // absent: skipped
  auto plan = BuildMountPlan(policy_);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->steps.size(), 7u);
  EXPECT_EQ(plan->steps[5].kind, MountStep::Kind::kBindBeneath);
  EXPECT_EQ(plan->steps[5].target, ".git");
  EXPECT_TRUE(plan->steps[5].writable);
  EXPECT_EQ(plan->steps[6].target, ".git/config");
  EXPECT_FALSE(plan->steps[6].writable);
  // A read-only project has nothing to pin.
  policy_.set_project_writable(false);
  plan = BuildMountPlan(policy_);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->steps.size(), 5u);
  // A .git that is a link to elsewhere is refused, not followed.
  policy_.set_project_writable(true);
  ASSERT_EQ(::rename((project_ + "/.git").c_str(), (root_ + "/git").c_str()),
            0);
  ASSERT_EQ(::symlink((root_ + "/git").c_str(), (project_ + "/.git").c_str()),
            0);
  EXPECT_FALSE(BuildMountPlan(policy_).ok());
}

// A job's scope (T6): bound writable after the writable paths and before
// the denied paths, so a denied file inside a scope folder stays denied; a
// scope entry that does not exist is left out; one through a link is
// refused. Control: without the scope, nothing of the read-only project is
// writable.
TEST_F(MountPlanTest, ScopeComesAfterWritablePathsAndBeforeDenied) {
  ASSERT_TRUE(MakeDirectories(project_ + "/src", 0755).ok());
  ASSERT_TRUE(MakeDirectories(project_ + "/extra", 0755).ok());
  ASSERT_TRUE(WriteFileAtomically(project_ + "/src/secret", "s", 0644).ok());
  policy_.set_project_writable(false);
  policy_.add_writable_paths("extra");
  policy_.add_denied_paths("src/secret");
  auto control = BuildMountPlan(policy_);
  ASSERT_TRUE(control.ok()) << control.status();
  EXPECT_EQ(control->writable, (std::vector<std::string>{
                                   "/tmp", "/dev", project_ + "/extra"}));

  policy_.add_scope_paths("src");
  policy_.add_scope_paths("not-yet");
  auto plan = BuildMountPlan(policy_);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->writable,
            (std::vector<std::string>{"/tmp", "/dev", project_ + "/extra",
                                      project_ + "/src"}));
  size_t extra = 0, scope = 0, denied = 0;
  for (size_t i = 0; i < plan->steps.size(); ++i) {
    const MountStep& step = plan->steps[i];
    if (step.target == "extra") extra = i;
    if (step.target == "src") {
      scope = i;
      EXPECT_EQ(step.kind, MountStep::Kind::kBindBeneath);
      EXPECT_TRUE(step.writable);
    }
    if (step.target == project_ + "/src/secret") denied = i;
    EXPECT_NE(step.target, "not-yet");
  }
  EXPECT_GT(scope, extra);
  EXPECT_GT(denied, scope);

  ASSERT_EQ(::symlink("/etc", (project_ + "/linked").c_str()), 0);
  policy_.add_scope_paths("linked");
  auto linked = BuildMountPlan(policy_);
  ASSERT_FALSE(linked.ok());
  EXPECT_NE(linked.status().message().find("scope path \"linked\""),
            std::string::npos)
      << linked.status();
}

// The stored walk's folder (sandbox/stored_walk.h) names what is hidden,
// with inodes and change times: hidden wherever a bind shows it, read-only
// or writable. The control: no bind shows it, no mount is spent on it.
TEST_F(MountPlanTest, TheStoredWalksFolderIsHiddenWhereABindShowsIt) {
  StoredWalk stored(root_, "store/walks");
  ASSERT_TRUE(MakeDirectories(stored.place(), 0700).ok());
  auto hidden = [&] {
    auto plan = BuildMountPlan(policy_, {nullptr, &stored});
    EXPECT_TRUE(plan.ok()) << plan.status();
    for (const MountStep& step : plan->steps) {
      if (step.kind == MountStep::Kind::kDenyDir &&
          step.target == stored.place()) {
        return true;
      }
    }
    return false;
  };
  EXPECT_FALSE(hidden());
  policy_.add_writable_paths(JoinPath(root_, "store"));
  EXPECT_TRUE(hidden());
  policy_.clear_writable_paths();
  policy_.add_read_only_paths(root_);
  EXPECT_TRUE(hidden());
}

}  // namespace
}  // namespace garuda
