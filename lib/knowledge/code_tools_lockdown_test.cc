// The lockdown of `garuda-agent tool`, in forked children (it cannot be
// undone): after it, a file write, a network socket, a new process and a
// program start fail; the same attempts without it succeed (the control).
// With a language server configured, programs may start, writes still fail.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/lockdown/roles.h"
#include "lib/lockdown/test_child.h"

namespace garuda::knowledge {
namespace {

std::string Attempts(const std::string& folder) {
  std::string out;
  int fd = open(JoinPath(folder, "written").c_str(),
                O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  absl::StrAppend(&out, "create=", ErrnoName(fd), "\n");
  if (fd >= 0) close(fd);
  int tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  absl::StrAppend(&out, "inet_socket=", ErrnoName(tcp), "\n");
  if (tcp >= 0) close(tcp);
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  if (pid > 0) waitpid(pid, nullptr, 0);
  absl::StrAppend(&out, "fork=", ErrnoName(pid), "\n");
  // A program that does not exist: ENOENT when exec is allowed, EPERM from
  // the filter when it is not; the child goes on either way.
  char* argv[] = {const_cast<char*>("/nonexistent/garuda-test"), nullptr};
  execve(argv[0], argv, environ);
  absl::StrAppend(&out, "execve=", ErrnoName(-1), "\n");
  return out;
}

class CodeToolsLockdownTest : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = JoinPath(std::getenv("TEST_TMPDIR"),
                       absl::StrCat("lockdown-", counter_++));
    ASSERT_TRUE(MakeDirectories(folder_, 0700).ok());
  }
  std::string folder_;
  static inline int counter_ = 0;
};

TEST_F(CodeToolsLockdownTest, WithoutLockdownEverythingWorks) {
  absl::StatusOr<std::string> seen =
      RunInChild([this] { return Attempts(folder_); });
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(*seen, "create=0\ninet_socket=0\nfork=0\nexecve=ENOENT\n");
}

TEST_F(CodeToolsLockdownTest, AfterLockdownNothingIsWrittenOrStarted) {
  absl::StatusOr<std::string> seen = RunInChild([this]() -> std::string {
    absl::StatusOr<LockdownReport> locked =
        LockDownAs(Role::kCodeTools, {}, {});
    if (!locked.ok()) return std::string(locked.status().message());
    return Attempts(folder_);
  });
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(*seen,
            "create=EACCES\ninet_socket=EPERM\nfork=EPERM\nexecve=EPERM\n");
}

TEST_F(CodeToolsLockdownTest, ALanguageServerMayStartButWritesStillFail) {
  absl::StatusOr<std::string> seen = RunInChild([this]() -> std::string {
    absl::StatusOr<LockdownReport> locked =
        LockDownAs(Role::kCodeToolsLsp, {}, {});
    if (!locked.ok()) return std::string(locked.status().message());
    // /dev/null stays writable for the server's stderr.
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    std::string out = absl::StrCat("dev_null=", ErrnoName(null), "\n");
    if (null >= 0) close(null);
    return out + Attempts(folder_);
  });
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(*seen,
            "dev_null=0\ncreate=EACCES\ninet_socket=EPERM\nfork=0\n"
            "execve=ENOENT\n");
}

}  // namespace
}  // namespace garuda::knowledge
