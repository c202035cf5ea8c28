#include "lib/jobs/job_guard.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"

namespace garuda {
namespace jobs {
namespace {

class JobGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "guardXXXXXX");
    base_ = ::mkdtemp(templ.data());
    worktree_ = JoinPath(base_, "worktree");
    ASSERT_TRUE(MakeDirectories(JoinPath(worktree_, "src"), 0755).ok());
    ASSERT_TRUE(MakeDirectories(JoinPath(worktree_, "ci"), 0755).ok());
    fd_ =
        UniqueFd(::open(worktree_.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd_.valid());
  }
  std::string JobFile(const std::string& json) {
    std::string path = JoinPath(base_, "job.json");
    EXPECT_TRUE(WriteFileAtomically(path, json, 0644).ok());
    return path;
  }
  std::string WriteError(const JobGuard& guard, const std::string& path) {
    absl::Status status = CheckJobWrite(guard, fd_.get(), path);
    return status.ok() ? "ok" : std::string(status.message());
  }
  std::string base_, worktree_;
  UniqueFd fd_;
};

TEST_F(JobGuardTest, AWriteOutsideTheScopeIsRefused) {
  absl::StatusOr<JobGuard> guard = LoadJobGuard(
      JobFile(R"({"prompt": "p", "writeScope": ["src"]})"), worktree_);
  ASSERT_TRUE(guard.ok()) << guard.status();
  EXPECT_EQ(WriteError(*guard, "src/a.c"), "ok");
  EXPECT_EQ(WriteError(*guard, "src/new/b.c"), "ok");
  EXPECT_EQ(WriteError(*guard, "ci/deploy.yml"),
            "\"ci/deploy.yml\" is outside the job's write scope (writeScope)");
  EXPECT_EQ(WriteError(*guard, "srcx"),
            "\"srcx\" is outside the job's write scope (writeScope)");
}

// A link inside a scope folder that points out of it: the string is in the
// scope, the place is not. Control: the same path as a real folder passes.
TEST_F(JobGuardTest, ALinkInsideTheScopeIsRefused) {
  absl::StatusOr<JobGuard> guard = LoadJobGuard(
      JobFile(R"({"prompt": "p", "writeScope": ["src"]})"), worktree_);
  ASSERT_TRUE(guard.ok()) << guard.status();
  ASSERT_TRUE(MakeDirectories(JoinPath(worktree_, "src/real"), 0755).ok());
  EXPECT_EQ(WriteError(*guard, "src/real/deploy.yml"), "ok");
  ASSERT_EQ(::symlink("../ci", JoinPath(worktree_, "src/out").c_str()), 0);
  EXPECT_EQ(WriteError(*guard, "src/out/deploy.yml"),
            "\"src/out/deploy.yml\" is reached through a symbolic link "
            "(\"src/out\"): a job writes only the place a path names");
  ASSERT_EQ(::symlink("../ci/deploy.yml",
                      JoinPath(worktree_, "src/file-link").c_str()),
            0);
  EXPECT_NE(WriteError(*guard, "src/file-link"), "ok");
}

TEST_F(JobGuardTest, AnOldJobMayWriteAnywhereButNotThroughALink) {
  absl::StatusOr<JobGuard> guard =
      LoadJobGuard(JobFile(R"({"prompt": "p"})"), worktree_);
  ASSERT_TRUE(guard.ok()) << guard.status();
  EXPECT_TRUE(guard->whole_worktree);
  EXPECT_EQ(WriteError(*guard, "ci/deploy.yml"), "ok");
  ASSERT_EQ(::symlink("/etc", JoinPath(worktree_, "etc").c_str()), 0);
  EXPECT_NE(WriteError(*guard, "etc/passwd"), "ok");
}

TEST_F(JobGuardTest, TheScopeIsCheckedAgainstTheWorktree) {
  ASSERT_EQ(::symlink("ci", JoinPath(worktree_, "build").c_str()), 0);
  absl::StatusOr<JobGuard> guard = LoadJobGuard(
      JobFile(R"({"prompt": "p", "writeScope": ["src", "build"]})"), worktree_);
  ASSERT_FALSE(guard.ok());
  EXPECT_NE(guard.status().message().find(
                "writeScope[1]: \"build\" is reached through a symbolic link"),
            std::string::npos)
      << guard.status();
}

TEST_F(JobGuardTest, TheJobsRulesAreNamedByItsFile) {
  std::string file = JobFile(
      R"json({"prompt": "p", "writeScope": ["src"],
          "permissions": {"allow": ["edit_file(src/**)"]}})json");
  absl::StatusOr<JobGuard> guard = LoadJobGuard(file, worktree_);
  ASSERT_TRUE(guard.ok()) << guard.status();
  Permissions permissions;
  ASSERT_TRUE(AddJobRules(*guard, &permissions).ok());
  const PermissionRequest edit{"edit_file", "src/a.c"};
  Decision decision = permissions.Decide(edit);
  EXPECT_EQ(decision.verdict, Verdict::kAllow);
  // Control: without the job's rules nothing allows it.
  Permissions none;
  EXPECT_NE(none.Decide(edit).verdict, Verdict::kAllow);
}

}  // namespace
}  // namespace jobs
}  // namespace garuda
