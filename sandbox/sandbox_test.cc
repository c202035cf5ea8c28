#include "sandbox/sandbox.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "sandbox/defaults.h"

namespace garuda {
namespace {

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "sbXXXXXX");
    root_ = ::mkdtemp(templ.data());
    project_ = JoinPath(root_, "project");
    outside_ = JoinPath(root_, "outside");
    ASSERT_TRUE(MakeDirectories(project_, 0755).ok());
    ASSERT_TRUE(MakeDirectories(outside_, 0755).ok());
    policy_.set_project(project_);
    policy_.set_project_writable(true);
    (*policy_.mutable_environment())["PATH"] = "/usr/bin:/bin";
  }
  RunResult Run(const std::string& script) {
    RunOptions options;
    options.argv = {"/bin/sh", "-c", script};
    options.capture_output = true;
    auto result = RunInSandbox(policy_, options);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : RunResult();
  }
  bool Exists(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
  }
  std::string root_, project_, outside_;
  SandboxPolicy policy_;
};

TEST_F(SandboxTest, ExitCodeAndOutput) {
  RunResult result = Run("echo hello; echo oops >&2; exit 3");
  EXPECT_EQ(result.kind, RunResult::Kind::kExited) << result.Describe();
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.stdout_data, "hello\n");
  EXPECT_EQ(result.stderr_data, "oops\n");
}

TEST_F(SandboxTest, WritesTheProjectButNotOutside) {
  RunResult result =
      Run("echo in > " + project_ + "/f && echo out > " + outside_ + "/f");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(Exists(project_ + "/f"));
  EXPECT_FALSE(Exists(outside_ + "/f"));
}

TEST_F(SandboxTest, ReadOnlyProject) {
  policy_.set_project_writable(false);
  RunResult result = Run("echo in > " + project_ + "/f");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_FALSE(Exists(project_ + "/f"));
  // Negative control: writable.
  policy_.set_project_writable(true);
  EXPECT_EQ(Run("echo in > " + project_ + "/f").exit_code, 0);
  EXPECT_TRUE(Exists(project_ + "/f"));
}

TEST_F(SandboxTest, WorkingDirectoryIsTheProject) {
  EXPECT_EQ(Run("pwd").stdout_data, project_ + "\n");
}

TEST_F(SandboxTest, EnvironmentComesFromThePolicy) {
  ::setenv("GARUDA_SECRET_FOR_TEST", "x", 1);
  EXPECT_EQ(Run("echo \"[$GARUDA_SECRET_FOR_TEST]\"").stdout_data, "[]\n");
  (*policy_.mutable_environment())["GARUDA_SECRET_FOR_TEST"] = "y";
  EXPECT_EQ(Run("echo \"[$GARUDA_SECRET_FOR_TEST]\"").stdout_data, "[y]\n");
}

TEST_F(SandboxTest, SignalAndFailureToStart) {
  RunResult killed = Run("kill -TERM $$");
  EXPECT_EQ(killed.kind, RunResult::Kind::kSignaled) << killed.Describe();
  EXPECT_EQ(killed.signal, SIGTERM);

  RunOptions options;
  options.argv = {"/no/such/program"};
  auto missing = RunInSandbox(policy_, options);
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->kind, RunResult::Kind::kFailedToStart);
  EXPECT_NE(missing->reason.find("/no/such/program"), std::string::npos);
}

TEST_F(SandboxTest, WallTimeEndsTheCommand) {
  policy_.mutable_limits()->set_wall_time_ms(200);
  RunResult result = Run("sleep 100");
  EXPECT_EQ(result.kind, RunResult::Kind::kTimedOut) << result.Describe();
  // Negative control: a command inside its time exits normally.
  EXPECT_EQ(Run("true").kind, RunResult::Kind::kExited);
}

TEST_F(SandboxTest, CaptureIsCapped) {
  RunOptions options;
  options.argv = {"/bin/sh", "-c", "head -c 100000 /dev/zero"};
  options.capture_output = true;
  options.capture_limit = 1000;
  auto result = RunInSandbox(policy_, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->stdout_data.size(), 1000u);
  EXPECT_TRUE(result->stdout_truncated);
  EXPECT_EQ(result->exit_code, 0);
}

TEST_F(SandboxTest, DeniedPathsHiddenAndCreatedWhenMissing) {
  ASSERT_TRUE(MakeDirectories(project_ + "/.git/hooks", 0755).ok());
  ASSERT_TRUE(
      WriteFileAtomically(project_ + "/.git/hooks/pre-commit", "secret", 0755)
          .ok());
  ASSERT_TRUE(WriteFileAtomically(project_ + "/key", "k", 0644).ok());
  policy_.add_denied_paths(".git/hooks");
  policy_.add_denied_paths(".garuda");
  policy_.add_denied_paths("key");
  EXPECT_NE(Run("cat .git/hooks/pre-commit").exit_code, 0);
  EXPECT_NE(Run("cat key").exit_code, 0);
  EXPECT_NE(Run("echo x > key").exit_code, 0);
  EXPECT_NE(Run("mkdir .garuda/x").exit_code, 0);
  EXPECT_TRUE(Exists(project_ + "/.garuda"));  // created empty
  EXPECT_FALSE(Exists(project_ + "/.garuda/x"));
  EXPECT_EQ(*ReadFileToString(project_ + "/key"), "k");
}

TEST_F(SandboxTest, EntryRunsConfined) {
  RunOptions options;
  options.entry = [this] {
    return ::access(outside_.c_str(), F_OK) == 0 ? 1 : 0;
  };
  auto result = RunInSandbox(policy_, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->kind, RunResult::Kind::kExited) << result->Describe();
  EXPECT_EQ(result->exit_code, 0);
}

TEST(DefaultsTest, Parse) {
  EXPECT_GT(DefaultSandboxSettings().read_only_paths_size(), 0);
  EXPECT_GT(DefaultSandboxSettings().project_denied_paths_size(), 0);
}

}  // namespace
}  // namespace garuda
