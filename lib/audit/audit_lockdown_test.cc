#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/audit/test_util.h"
#include "lib/audit/verify.h"
#include "lib/base/files.h"
#include "lib/lockdown/roles.h"
#include "lib/lockdown/test_child.h"

namespace garuda {
namespace {

// In a child: (lock down,) verify a log, then try to write a file, open an
// AF_INET socket and start a program. "<verify> <write> <socket> <exec>".
std::string VerifyThenTryForbidden(const std::string& log_path,
                                   const std::string& outside, bool lock) {
  absl::StatusOr<std::string> result = RunInChild([&]() -> std::string {
    if (lock) {
      absl::StatusOr<LockdownReport> locked = LockDownAs(Role::kAudit, {}, {});
      if (!locked.ok()) return locked.status().ToString();
    }
    absl::StatusOr<std::string> content = ReadRegularFile(log_path);
    std::string verified =
        content.ok() ? VerifyLogContent(*content, "a", nullptr, nullptr).status()
                     : content.status().ToString();
    int fd = ::open(outside.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    std::string wrote = fd >= 0 ? "wrote" : ErrnoName(fd);
    if (fd >= 0) ::close(fd);
    int sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    std::string socket = sock >= 0 ? "socket" : ErrnoName(sock);
    if (sock >= 0) ::close(sock);
    // execve returns only when refused; "/bin/true" exits 0 otherwise and
    // RunInChild would see no result.
    std::string exec = "exec";
    if (lock) {
      char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
      long r = ::execve("/bin/true", argv, environ);
      exec = ErrnoName(r);
    }
    return absl::StrCat(verified, " ", wrote, " ", socket, " ", exec);
  });
  return result.ok() ? *result : result.status().ToString();
}

TEST(AuditLockdownTest, VerifyReadsButCannotWriteConnectOrExec) {
  std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/lockdown");
  ASSERT_TRUE(MakeDirectories(dir, 0700).ok());
  std::string log = JoinPath(dir, "a.jsonl");
  ASSERT_TRUE(WriteFileAtomically(log, TestLog("a", 3, nullptr), 0600).ok());
  EXPECT_EQ(VerifyThenTryForbidden(log, JoinPath(dir, "locked"), true),
            "ok EACCES EPERM EPERM");
  EXPECT_NE(::access(JoinPath(dir, "locked").c_str(), F_OK), 0);
  // Negative control: the same calls before any lockdown all work.
  EXPECT_EQ(VerifyThenTryForbidden(log, JoinPath(dir, "open"), false),
            "ok wrote socket exec");
  EXPECT_EQ(::access(JoinPath(dir, "open").c_str(), F_OK), 0);
}

}  // namespace
}  // namespace garuda
