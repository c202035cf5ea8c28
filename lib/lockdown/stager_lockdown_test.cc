// Real processes: each lockdown happens in a forked child, since it cannot
// be undone. Every attempt runs first without the lockdown (the negative
// control: it works), then after it.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/lockdown/landlock.h"
#include "lib/lockdown/roles.h"
#include "lib/lockdown/test_child.h"

namespace garuda {
namespace {

using ::testing::HasSubstr;

// UFFD_USER_MODE_ONLY: open to unprivileged processes for their own memory.
constexpr int kUserModeOnly = 1;

class StagerLockdownTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    ASSERT_NE(tmp, nullptr);
    root_ = JoinPath(tmp, absl::StrCat("stager-", ::getpid(), "-", counter_++));
    staging_ = JoinPath(root_, "staging");
    outside_ = JoinPath(root_, "outside");
    ASSERT_TRUE(MakeDirectories(staging_, 0700).ok());
    ASSERT_TRUE(MakeDirectories(outside_, 0700).ok());
    absl::StatusOr<int> abi = LandlockAbiVersion();
    ASSERT_TRUE(abi.ok()) << abi.status();
    if (*abi < kLockdownMinLandlockAbi) {
      GTEST_SKIP() << "this kernel has no Landlock (the guard's lockdown "
                      "refuses; lockdown_test covers that)";
    }
  }

  // One "name=result" line per attempt (result "0" or an errno name).
  std::string Attempts() const {
    std::string out;
    long uffd = ::syscall(SYS_userfaultfd, kUserModeOnly | O_CLOEXEC);
    absl::StrAppend(&out, "userfaultfd=", ErrnoName(uffd), "\n");
    if (uffd >= 0) ::close(static_cast<int>(uffd));
    absl::StrAppend(
        &out, "no_new_privs=", ::prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), "\n");
    absl::StrAppend(&out, "seccomp=", ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0),
                    "\n");
    int fd = ::open(JoinPath(outside_, "new").c_str(),
                    O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    absl::StrAppend(&out, "create_outside=", ErrnoName(fd), "\n");
    if (fd >= 0) ::close(fd);
    int rc = ::mkdir(JoinPath(staging_, "view").c_str(), 0700);
    absl::StrAppend(&out, "mkdir_staging=", ErrnoName(rc), "\n");
    rc = ::rmdir(JoinPath(staging_, "view").c_str());
    absl::StrAppend(&out, "rmdir_staging=", ErrnoName(rc), "\n");
    // What building a sandbox takes: a user and mount namespace of its own,
    // and a mount in it.
    rc = ::unshare(CLONE_NEWUSER | CLONE_NEWNS);
    absl::StrAppend(&out, "unshare=", ErrnoName(rc), "\n");
    if (rc == 0) {
      rc = ::mount("none", staging_.c_str(), "tmpfs", 0, nullptr);
      absl::StrAppend(&out, "mount=", ErrnoName(rc), "\n");
    }
    return out;
  }

  static inline int counter_ = 0;
  std::string root_, staging_, outside_;
};

TEST_F(StagerLockdownTest, NegativeControlWithoutLockdownEverythingWorks) {
  absl::StatusOr<std::string> result =
      RunInChild([this]() { return Attempts(); });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result,
            "userfaultfd=0\nno_new_privs=0\nseccomp=0\ncreate_outside=0\n"
            "mkdir_staging=0\nrmdir_staging=0\nunshare=0\nmount=0\n");
}

TEST_F(StagerLockdownTest, SandboxBuilderKeepsNamespacesAndMountsOnly) {
  absl::StatusOr<std::string> result = RunInChild([this]() -> std::string {
    absl::StatusOr<LockdownReport> done = LockDownAs(Role::kStager, {}, {});
    if (!done.ok()) return "lockdown failed: " + done.status().ToString();
    const LockdownReport* report = &*done;
    if (report->landlock_enforced || !report->seccomp_enforced) {
      return "lockdown not as expected";
    }
    return absl::StrCat("weaker=", report->weaker, "\n", Attempts());
  });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(*result, HasSubstr("userfaultfd=EPERM\n"));
  EXPECT_THAT(*result, HasSubstr("no_new_privs=1\n"));
  EXPECT_THAT(*result, HasSubstr("seccomp=2\n"));
  // No Landlock, by design, and the report says why.
  EXPECT_THAT(*result, HasSubstr("weaker=no Landlock for role stager"));
  EXPECT_THAT(*result, HasSubstr("create_outside=0\n"));
  EXPECT_THAT(*result, HasSubstr("unshare=0\nmount=0\n"));
}

TEST_F(StagerLockdownTest, GuardWritesOnlyBeneathStagingAndCannotMount) {
  absl::StatusOr<std::string> result = RunInChild([this]() -> std::string {
    RoleNeeds needs;
    needs.writable_paths = {staging_};
    absl::StatusOr<LockdownReport> done =
        LockDownAs(Role::kStagingGuard, needs, {});
    if (!done.ok()) return "lockdown failed: " + done.status().ToString();
    const LockdownReport* report = &*done;
    if (!report->landlock_enforced || !report->seccomp_enforced ||
        !report->weaker.empty()) {
      return "lockdown incomplete";
    }
    return Attempts();
  });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(*result, HasSubstr("userfaultfd=EPERM\n"));
  EXPECT_THAT(*result, HasSubstr("create_outside=EACCES\n"));
  EXPECT_THAT(*result, HasSubstr("mkdir_staging=0\nrmdir_staging=0\n"));
  // A Landlock domain forbids mounting, even in a namespace of one's own:
  // why the sandbox builder has none.
  EXPECT_THAT(*result, HasSubstr("mount=EPERM\n"));
}

TEST(StagerLockdownOptionsTest, EachProcessKindChecksItsPaths) {
  RoleNeeds builder;
  builder.writable_paths = {"/tmp"};
  EXPECT_THAT(LockDownAs(Role::kStager, builder, {}).status().ToString(),
              HasSubstr("cannot be given /tmp as a writable path"));
  EXPECT_THAT(LockDownAs(Role::kStagingGuard, {}, {}).status().ToString(),
              HasSubstr("needs the folder it writes"));
}

}  // namespace
}  // namespace garuda
