// Real processes: each lockdown happens in a forked child, since it cannot be
// undone; each check has its negative control (the same child without the
// lockdown succeeds).
#include "lib/lockdown/lockdown.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/lockdown/landlock.h"
#include "lib/lockdown/test_child.h"

namespace garuda {
namespace {

using ::testing::HasSubstr;

class AuditorLockdownTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TEST_TMPDIR");
    ASSERT_NE(tmp, nullptr);
    root_ = JoinPath(tmp, absl::StrCat("auditor-", getpid(), "-", counter_++));
    audit_ = JoinPath(root_, "audit");
    outside_ = JoinPath(root_, "outside");
    ASSERT_TRUE(MakeDirectories(audit_, 0700).ok());
    ASSERT_TRUE(MakeDirectories(outside_, 0700).ok());
    ASSERT_TRUE(
        WriteFileAtomically(JoinPath(outside_, "existing"), "old", 0600).ok());

    absl::StatusOr<UniqueFd> listener = ListenOnLoopback(&port_);
    ASSERT_TRUE(listener.ok()) << listener.status();
    listener_ = std::move(*listener);
  }

  // The attempts, one "name=result" line each (result "0" or an errno name).
  std::string Attempts() const {
    std::string out;
    int fd = open(JoinPath(outside_, "new").c_str(),
                  O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    absl::StrAppend(&out, "create_outside=", ErrnoName(fd), "\n");
    if (fd >= 0) close(fd);
    fd = open(JoinPath(outside_, "existing").c_str(), O_WRONLY | O_CLOEXEC);
    absl::StrAppend(&out, "change_outside=", ErrnoName(fd), "\n");
    if (fd >= 0) close(fd);
    int rc = unlink(JoinPath(outside_, "existing").c_str());
    absl::StrAppend(&out, "remove_outside=", ErrnoName(rc), "\n");
    rc = mkdir(JoinPath(outside_, "dir").c_str(), 0700);
    absl::StrAppend(&out, "mkdir_outside=", ErrnoName(rc), "\n");

    int tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (tcp < 0) {
      absl::StrAppend(&out, "connect=", ErrnoName(tcp), "\n");
    } else {
      sockaddr_in address = {};
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      address.sin_port = htons(port_);
      rc = connect(tcp, reinterpret_cast<sockaddr*>(&address), sizeof(address));
      absl::StrAppend(&out, "connect=", ErrnoName(rc), "\n");
      close(tcp);
    }

    fd = open(JoinPath(audit_, "log.jsonl").c_str(),
              O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    bool wrote = fd >= 0 && write(fd, "line\n", 5) == 5;
    absl::StrAppend(&out, "write_inside=", wrote ? "0" : ErrnoName(-1), "\n");
    if (fd >= 0) close(fd);
    rc = mkdir(JoinPath(audit_, "sub").c_str(), 0700);
    absl::StrAppend(&out, "mkdir_inside=", ErrnoName(rc), "\n");
    return out;
  }

  LockdownOptions AuditorOptions() const {
    LockdownOptions options;
    options.role = "auditor";
    options.writable_paths = {audit_};
    return options;
  }

  static inline int counter_ = 0;
  std::string root_, audit_, outside_;
  UniqueFd listener_;
  int port_ = 0;
};

TEST_F(AuditorLockdownTest, LockedDownChildWritesOnlyInsideAuditFolder) {
  absl::StatusOr<int> abi = LandlockAbiVersion();
  ASSERT_TRUE(abi.ok()) << abi.status();
  if (*abi < kLockdownMinLandlockAbi) {
    GTEST_SKIP() << "this kernel has no Landlock, so LockDown refuses (the "
                    "MissingLandlock tests cover that)";
  }
  absl::StatusOr<std::string> result = RunInChild([this]() -> std::string {
    absl::StatusOr<LockdownReport> report = LockDown(AuditorOptions());
    if (!report.ok()) return "lockdown failed: " + report.status().ToString();
    if (!report->landlock_enforced || !report->seccomp_enforced ||
        !report->weaker.empty()) {
      return "lockdown incomplete";
    }
    return Attempts();
  });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(*result, HasSubstr("create_outside=EACCES\n"));
  EXPECT_THAT(*result, HasSubstr("change_outside=EACCES\n"));
  EXPECT_THAT(*result, HasSubstr("remove_outside=EACCES\n"));
  EXPECT_THAT(*result, HasSubstr("mkdir_outside=EACCES\n"));
  EXPECT_THAT(*result, HasSubstr("connect=EPERM\n"));
  EXPECT_THAT(*result, HasSubstr("write_inside=0\n"));
  EXPECT_THAT(*result, HasSubstr("mkdir_inside=0\n"));
}

TEST_F(AuditorLockdownTest, NegativeControlWithoutLockdownEverythingWorks) {
  absl::StatusOr<std::string> result =
      RunInChild([this]() { return Attempts(); });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result,
            "create_outside=0\nchange_outside=0\nremove_outside=0\n"
            "mkdir_outside=0\nconnect=0\nwrite_inside=0\nmkdir_inside=0\n");
}

TEST_F(AuditorLockdownTest,
       MissingLandlockWithoutTokenIsAnErrorAndChangesNothing) {
  absl::StatusOr<std::string> result = RunInChild([this]() -> std::string {
    absl::StatusOr<LockdownReport> report =
        lockdown_internal::LockDownWithProbe(AuditorOptions(),
                                             [] { return 0; });
    if (report.ok()) return "lockdown succeeded";
    // Nothing may have been applied: the attempts all still work.
    return report.status().ToString() + "\n" + Attempts();
  });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(*result, HasSubstr("FAILED_PRECONDITION"));
  EXPECT_THAT(*result, HasSubstr("Landlock ABI is 0"));
  EXPECT_THAT(*result, HasSubstr("create_outside=0\n"));
  EXPECT_THAT(*result, HasSubstr("connect=0\n"));
}

TEST_F(AuditorLockdownTest, MissingLandlockWithTokenIsReportedAsWeaker) {
  absl::StatusOr<std::string> result = RunInChild([this]() -> std::string {
    LockdownOptions options = AuditorOptions();
    options.accept_weaker = AcceptWeakerLockdown{"test of the weaker mode"};
    absl::StatusOr<LockdownReport> report =
        lockdown_internal::LockDownWithProbe(options, [] { return 0; });
    if (!report.ok()) return report.status().ToString();
    return absl::StrCat("landlock=", report->landlock_enforced,
                        " seccomp=", report->seccomp_enforced,
                        " weaker=", report->weaker, "\n", Attempts());
  });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(*result, HasSubstr("landlock=0 seccomp=1"));
  EXPECT_THAT(*result, HasSubstr("no Landlock"));
  EXPECT_THAT(*result, HasSubstr("test of the weaker mode"));
  // Writes are no longer confined, but the seccomp filter still is there.
  EXPECT_THAT(*result, HasSubstr("create_outside=0\n"));
  EXPECT_THAT(*result, HasSubstr("connect=EPERM\n"));
}

TEST(LockdownTest, UnknownRoleIsAnError) {
  absl::StatusOr<std::string> result = RunInChild([]() -> std::string {
    LockdownOptions options;
    options.role = "nobody";
    return LockDown(options).status().ToString();
  });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(*result, HasSubstr("no seccomp policy \"nobody\""));
}

TEST(LockdownTest, MissingWritablePathIsAnErrorNamingIt) {
  absl::StatusOr<std::string> result = RunInChild([]() -> std::string {
    LockdownOptions options;
    options.role = "auditor";
    options.writable_paths = {"/nonexistent/garuda/audit"};
    return LockDown(options).status().ToString();
  });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(*result, HasSubstr("/nonexistent/garuda/audit"));
}

}  // namespace
}  // namespace garuda
