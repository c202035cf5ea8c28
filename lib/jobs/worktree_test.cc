#include "lib/jobs/worktree.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"

namespace garuda {
namespace jobs {
namespace {

class WorktreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "wtXXXXXX");
    root_ = ::mkdtemp(templ.data());
    checkout_ = JoinPath(root_, "checkout");
    jobs_ = JoinPath(root_, "jobs");
    ::setenv("HOME", root_.c_str(), 1);  // no person's git config here
    Write(checkout_ + "/src/a.c", "int a;\n");
    Write(checkout_ + "/.github/ci.yml", "on: push\n");
    Write(checkout_ + "/.gitignore", "target/\n");
    Write(checkout_ + "/README.md", "readme\n");
    Git(checkout_, "init -q -b main");
    Git(checkout_, "add -A");
    Git(checkout_, "commit -q -m base");
  }
  void Write(const std::string& path, const std::string& text) {
    ASSERT_TRUE(MakeDirectories(Dirname(path), 0755).ok());
    ASSERT_TRUE(WriteFileAtomically(path, text, 0644).ok());
  }
  void Git(const std::string& dir, const std::string& args) {
    std::string command = absl::StrCat(
        "git -C '", dir, "' -c user.name=t -c user.email=t@t ", args, " >/dev/null");
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  std::string Read(const std::string& path) {
    auto text = ReadFileToString(path);
    return text.ok() ? *text : "<absent>";
  }
  std::string GitOutput(const std::string& dir, const std::string& args) {
    std::string command = absl::StrCat("git -C '", dir, "' ", args);
    FILE* pipe = ::popen(command.c_str(), "r");
    std::string out;
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
    ::pclose(pipe);
    return out;
  }

  std::string root_, checkout_, jobs_;
};

TEST_F(WorktreeTest, AJobWorksInItsOwnWorktreeAndBranch) {
  absl::StatusOr<JobWorktree> worktree =
      CreateJobWorktree(checkout_, "nightly", "20261201T220000Z", jobs_);
  ASSERT_TRUE(worktree.ok()) << worktree.status();
  EXPECT_EQ(worktree->branch, "garuda/nightly/20261201T220000Z");
  EXPECT_EQ(worktree->path, jobs_ + "/nightly-20261201T220000Z");
  EXPECT_EQ(Read(worktree->path + "/src/a.c"), "int a;\n");
  EXPECT_EQ(GitOutput(checkout_, "rev-parse HEAD"),
            worktree->base_commit + "\n");
  // The person's checkout stays on its branch.
  EXPECT_EQ(GitOutput(checkout_, "rev-parse --abbrev-ref HEAD"), "main\n");
}

TEST_F(WorktreeTest, ThePostCheckSeesChangesOutsideTheScope) {
  absl::StatusOr<JobWorktree> worktree =
      CreateJobWorktree(checkout_, "lint", "1", jobs_);
  ASSERT_TRUE(worktree.ok()) << worktree.status();
  const std::string& w = worktree->path;
  Write(w + "/src/a.c", "int a = 1;\n");
  Write(w + "/src/new.c", "int n;\n");
  Write(w + "/target/out.o", "object");  // ignored, but still a change
  std::vector<std::string> scope = {"src", "target"};
  auto changes = ListWorktreeChanges(w, worktree->base_commit);
  ASSERT_TRUE(changes.ok()) << changes.status();
  EXPECT_EQ(changes->paths, (std::vector<std::string>{"src/a.c", "src/new.c",
                                                      "target/out.o"}));
  EXPECT_TRUE(OutsideScope(*changes, scope, false).empty());

  // Outside: a changed CI file, a deleted README.
  Write(w + "/.github/ci.yml", "on: [push, pull_request]\n");
  ASSERT_EQ(::unlink((w + "/README.md").c_str()), 0);
  changes = ListWorktreeChanges(w, worktree->base_commit);
  ASSERT_TRUE(changes.ok());
  EXPECT_EQ(OutsideScope(*changes, scope, false),
            (std::vector<std::string>{".github/ci.yml", "README.md"}));
  // Control: a job without a scope keeps only HEAD.
  EXPECT_TRUE(OutsideScope(*changes, scope, true).empty());
}

TEST_F(WorktreeTest, AGitCommitInTheTurnDoesNotHideItsChanges) {
  absl::StatusOr<JobWorktree> worktree =
      CreateJobWorktree(checkout_, "sneaky", "1", jobs_);
  ASSERT_TRUE(worktree.ok()) << worktree.status();
  const std::string& w = worktree->path;
  Write(w + "/.github/ci.yml", "steal: secrets\n");
  Git(w, "commit -q -am sneaky");
  auto changes = ListWorktreeChanges(w, worktree->base_commit);
  ASSERT_TRUE(changes.ok()) << changes.status();
  EXPECT_TRUE(changes->head_moved);
  EXPECT_EQ(OutsideScope(*changes, {"src"}, false),
            (std::vector<std::string>{"HEAD", ".github/ci.yml"}));
  EXPECT_EQ(OutsideScope(*changes, {}, true), (std::vector<std::string>{"HEAD"}));
}

TEST_F(WorktreeTest, TheCommitHoldsTheChangesOnTheJobsBranch) {
  absl::StatusOr<JobWorktree> worktree =
      CreateJobWorktree(checkout_, "deps", "1", jobs_);
  ASSERT_TRUE(worktree.ok()) << worktree.status();
  const std::string& w = worktree->path;
  Write(w + "/src/a.c", "int a = 2;\n");
  Write(w + "/src/b.c", "int b;\n");
  Write(w + "/target/out.o", "object");
  absl::StatusOr<std::string> commit = CommitJobChanges(w, "garuda job deps");
  ASSERT_TRUE(commit.ok()) << commit.status();
  ASSERT_EQ(commit->size(), 40u);
  EXPECT_EQ(GitOutput(checkout_, "rev-parse garuda/deps/1"), *commit + "\n");
  EXPECT_EQ(GitOutput(checkout_, "diff --name-only main garuda/deps/1"),
            "src/a.c\nsrc/b.c\n");
  // The person's working tree is untouched.
  EXPECT_EQ(Read(checkout_ + "/src/a.c"), "int a;\n");
  EXPECT_EQ(Read(checkout_ + "/src/b.c"), "<absent>");
  // Nothing left: no second commit.
  absl::StatusOr<std::string> again = CommitJobChanges(w, "again");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, "");
}

}  // namespace
}  // namespace jobs
}  // namespace garuda
