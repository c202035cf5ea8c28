#include "sandbox/mount_plan.h"

#include <stdlib.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "lib/base/files.h"

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
  ASSERT_GE(plan->steps.size(), 8u);
  EXPECT_EQ(plan->steps[0].target, "/usr");
  EXPECT_EQ(plan->steps[1].kind, MountStep::Kind::kProc);
  EXPECT_EQ(plan->steps[2].kind, MountStep::Kind::kDev);
  EXPECT_EQ(plan->steps[3].target, "/tmp");
  EXPECT_EQ(plan->steps[4].target, project_);
  EXPECT_TRUE(plan->steps[4].writable);
  EXPECT_EQ(plan->steps[5].kind, MountStep::Kind::kDenyDir);
  EXPECT_EQ(plan->steps[6].kind, MountStep::Kind::kDenyFile);
  EXPECT_EQ(plan->steps[7].kind, MountStep::Kind::kDenyFile);
  EXPECT_EQ(plan->steps[7].target, project_ + "/key");
  EXPECT_EQ(plan->steps.size(), 8u);
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

}  // namespace
}  // namespace garuda
