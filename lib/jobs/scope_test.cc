#include "lib/jobs/scope.h"

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

TEST(InScopeTest, FoldersHoldTheirSubtreeOnly) {
  std::vector<std::string> scope = {"src", "README.md", "build/out"};
  EXPECT_TRUE(InScope(scope, "src"));
  EXPECT_TRUE(InScope(scope, "src/a/b.c"));
  EXPECT_TRUE(InScope(scope, "README.md"));
  EXPECT_TRUE(InScope(scope, "build/out/x.o"));
  EXPECT_FALSE(InScope(scope, "srcx/a"));
  EXPECT_FALSE(InScope(scope, "build/other"));
  EXPECT_FALSE(InScope(scope, "build"));
  EXPECT_FALSE(InScope(scope, ".github/workflows/ci.yml"));
  EXPECT_FALSE(InScope({}, "src/a"));
}

class ScopeInWorktreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "scopeXXXXXX");
    root_ = ::mkdtemp(templ.data());
    ASSERT_TRUE(MakeDirectories(JoinPath(root_, "src/gen"), 0755).ok());
    ASSERT_TRUE(WriteFileAtomically(JoinPath(root_, "README.md"), "r", 0644).ok());
    ASSERT_EQ(::symlink("/etc", JoinPath(root_, "etc-link").c_str()), 0);
    ASSERT_EQ(::symlink("src", JoinPath(root_, "src-link").c_str()), 0);
    fd_ = UniqueFd(::open(root_.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd_.valid());
  }
  std::string ErrorOf(std::vector<std::string> scope) {
    absl::Status status = CheckScopeInWorktree(fd_.get(), scope);
    return status.ok() ? "ok" : std::string(status.message());
  }
  std::string root_;
  UniqueFd fd_;
};

TEST_F(ScopeInWorktreeTest, FoldersFilesAndNotYetMadeEntriesPass) {
  EXPECT_EQ(ErrorOf({"src", "src/gen", "README.md", "target", "new/folder"}), "ok");
}

TEST_F(ScopeInWorktreeTest, ALinkOnTheWayIsRefused) {
  EXPECT_EQ(ErrorOf({"src", "etc-link"}),
            "writeScope[1]: \"etc-link\" is reached through a symbolic link (\"etc-link\")");
  EXPECT_EQ(ErrorOf({"src-link/gen"}),
            "writeScope[0]: \"src-link/gen\" is reached through a symbolic link (\"src-link\")");
  EXPECT_EQ(ErrorOf({"README.md/x"}),
            "writeScope[0]: \"README.md/x\": \"README.md\" is not a folder");
  // Control: the real folder behind the link is accepted.
  EXPECT_EQ(ErrorOf({"src/gen"}), "ok");
}

}  // namespace
}  // namespace jobs
}  // namespace garuda
