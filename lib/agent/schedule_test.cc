#include "lib/agent/schedule.h"

#include <unistd.h>

#include "gtest/gtest.h"
#include "lib/changeset/test_tree.h"
#include "lib/jobs/job_file.h"

namespace garuda {
namespace agent {
namespace {

using garuda::testing::Write;

TEST(ProposeScopeTest, FoldersOfNamedFilesAndTheBuildOutput) {
  const std::string root = garuda::testing::NewTempDir("schedule") + "/p";
  Write(root + "/src/app/main.rs", "fn main() {}\n");
  Write(root + "/src/app/lib.rs", "\n");
  Write(root + "/README.md", "r\n");
  Write(root + "/Cargo.toml", "[package]\n");
  Write(root + "/ci/deploy.yml", "d\n");
  ASSERT_EQ(::symlink("ci", (root + "/linked").c_str()), 0);
  auto project = Project::Open(root);
  ASSERT_TRUE(project.ok()) << project.status();
  EXPECT_EQ(ProposeScope(**project, {"src/app/lib.rs"},
                         "Fix src/app/main.rs and README.md. Not missing.c"),
            (std::vector<std::string>{"README.md", "src/app", "target"}));
  // A file reached through a link is not proposed (its place is ci/, which
  // nothing named), nor is git's own folder.
  EXPECT_EQ(ProposeScope(**project, {"linked/deploy.yml", ".git/config"}, ""),
            (std::vector<std::string>{"target"}));
}

// What /schedule writes reads back as a job with exactly that scope; an
// empty scope stays "nothing", not "the whole worktree".
TEST(ScheduledJobJsonTest, ReadsBackAsTheJob) {
  absl::StatusOr<jobs::Job> job = jobs::ParseJobFile(
      ScheduledJobJson("Fix \"it\"\n", {"src", "target"}), "x.json");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->file.prompt(), "Fix \"it\"\n");
  EXPECT_EQ(job->file.write_scope_size(), 2);
  EXPECT_FALSE(job->whole_worktree);
  absl::StatusOr<jobs::Job> none =
      jobs::ParseJobFile(ScheduledJobJson("p", {}), "x.json");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->whole_worktree);
  EXPECT_EQ(none->file.write_scope_size(), 0);
}

}  // namespace
}  // namespace agent
}  // namespace garuda
