// Landlock in forked children (it cannot be undone), each with its negative
// control, and the rulesets' sticky errors.
#include "lib/lockdown/landlock.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/lockdown/test_child.h"

namespace garuda {
namespace {

using ::testing::HasSubstr;

TEST(LandlockRightsTest, EachAbiAddsItsWriteRights) {
  EXPECT_EQ(LandlockWriteRights(0), 0u);
  EXPECT_NE(LandlockWriteRights(1) & LANDLOCK_ACCESS_FS_WRITE_FILE, 0u);
  EXPECT_EQ(LandlockWriteRights(1) & LANDLOCK_ACCESS_FS_REFER, 0u);
  EXPECT_NE(LandlockWriteRights(2) & LANDLOCK_ACCESS_FS_REFER, 0u);
  EXPECT_EQ(LandlockWriteRights(2) & (1ULL << 14), 0u);
  EXPECT_NE(LandlockWriteRights(3) & (1ULL << 14), 0u);  // TRUNCATE
  EXPECT_EQ(LandlockWriteRights(3) & LandlockReadRights(), 0u);
  EXPECT_THAT(LandlockGaps(2), HasSubstr("truncate"));
  EXPECT_THAT(LandlockGaps(3), ::testing::Not(HasSubstr("truncate(2)")));
  EXPECT_THAT(LandlockGaps(3), HasSubstr("chmod"));
}

TEST(LandlockRulesetTest, KernelWithoutLandlockFailsClosed) {
  absl::Status status = LandlockRuleset::ForWritesWithAbi(0, 1)
                            .AllowWritesBeneath("/tmp")
                            .Enforce();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("Landlock ABI is 0"));
}

TEST(LandlockRulesetTest, KernelBelowMinimumAbiFailsClosed) {
  absl::Status status = LandlockRuleset::ForWritesWithAbi(2, 3).Enforce();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("at least 3"));
}

TEST(LandlockRulesetTest, RelativePathIsAStickyError) {
  absl::Status status = LandlockRuleset::ForWritesWithAbi(3, 1)
                            .AllowWritesBeneath("relative/dir")
                            .AllowWritesBeneath("/tmp")
                            .Enforce();
  EXPECT_THAT(status.message(), HasSubstr("\"relative/dir\" must be absolute"));
}

class LandlockChildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<int> abi = LandlockAbiVersion();
    ASSERT_TRUE(abi.ok()) << abi.status();
    if (*abi < 1) GTEST_SKIP() << "this kernel has no Landlock";
    abi_ = *abi;
    const char* tmp = getenv("TEST_TMPDIR");
    ASSERT_NE(tmp, nullptr);
    root_ = JoinPath(tmp, absl::StrCat("landlock-", getpid(), "-", count_++));
    writable_ = JoinPath(root_, "writable");
    ASSERT_TRUE(MakeDirectories(writable_, 0700).ok());
    ASSERT_TRUE(WriteFileAtomically(single_file(), "single", 0600).ok());
    ASSERT_TRUE(WriteFileAtomically(outside_file(), "outside", 0600).ok());
  }

  std::string single_file() const { return JoinPath(root_, "single"); }
  std::string outside_file() const { return JoinPath(root_, "outside"); }

  std::string Attempts() const {
    std::string out;
    int fd = open(single_file().c_str(), O_WRONLY | O_CLOEXEC);
    absl::StrAppend(&out, "write_single=", ErrnoName(fd), "\n");
    if (fd >= 0) close(fd);
    fd = open(JoinPath(writable_, "new").c_str(),
              O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    absl::StrAppend(&out, "create_inside=", ErrnoName(fd), "\n");
    if (fd >= 0) close(fd);
    fd = open(JoinPath(root_, "new").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC,
              0600);
    absl::StrAppend(&out, "create_beside=", ErrnoName(fd), "\n");
    if (fd >= 0) close(fd);
    int rc = truncate(outside_file().c_str(), 0);
    absl::StrAppend(&out, "truncate_outside=", ErrnoName(rc), "\n");
    rc = rename(JoinPath(writable_, "new").c_str(),
                JoinPath(root_, "moved").c_str());
    absl::StrAppend(&out, "rename_out=", ErrnoName(rc), "\n");
    fd = open(outside_file().c_str(), O_RDONLY | O_CLOEXEC);
    absl::StrAppend(&out, "read_outside=", ErrnoName(fd), "\n");
    if (fd >= 0) close(fd);
    return out;
  }

  static inline int count_ = 0;
  int abi_ = 0;
  std::string root_, writable_;
};

TEST_F(LandlockChildTest, WritesOnlyBeneathAllowedPaths) {
  absl::StatusOr<std::string> result = RunInChild([this]() -> std::string {
    absl::Status status = LandlockRuleset::ForWrites(1)
                              .AllowWritesBeneath(writable_)
                              .AllowWritesBeneath(single_file())
                              .AllowReadsBeneath("/")  // no-op: reads free
                              .Enforce();
    if (!status.ok()) return status.ToString();
    return Attempts();
  });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(*result, HasSubstr("write_single=0\n"));
  EXPECT_THAT(*result, HasSubstr("create_inside=0\n"));
  EXPECT_THAT(*result, HasSubstr("create_beside=EACCES\n"));
  // ABI 1 refuses every cross-folder rename with EXDEV; later ABIs EACCES
  // for a destination outside.
  EXPECT_THAT(*result, ::testing::AnyOf(HasSubstr("rename_out=EACCES\n"),
                                        HasSubstr("rename_out=EXDEV\n")));
  EXPECT_THAT(*result, HasSubstr("read_outside=0\n"));
  if (abi_ >= 3) {
    EXPECT_THAT(*result, HasSubstr("truncate_outside=EACCES\n"));
  }
}

TEST_F(LandlockChildTest, NegativeControlWithoutRuleset) {
  absl::StatusOr<std::string> result =
      RunInChild([this] { return Attempts(); });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result,
            "write_single=0\ncreate_inside=0\ncreate_beside=0\n"
            "truncate_outside=0\nrename_out=0\nread_outside=0\n");
}

TEST_F(LandlockChildTest, ReadsAndWritesRulesetConfinesReads) {
  absl::StatusOr<std::string> result = RunInChild([this]() -> std::string {
    absl::Status status = LandlockRuleset::ForReadsAndWrites(1)
                              .AllowWritesBeneath(writable_)
                              .AllowReadsBeneath(writable_)
                              .Enforce();
    if (!status.ok()) return status.ToString();
    return Attempts();
  });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(*result, HasSubstr("read_outside=EACCES\n"));
  EXPECT_THAT(*result, HasSubstr("create_inside=0\n"));
}

// "bind=<result> connect=<result>" for TCP on the loopback to `port`.
std::string TcpAttempts(int port) {
  std::string out;
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  UniqueFd server(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int rc = server ? bind(server.get(), reinterpret_cast<sockaddr*>(&address),
                         sizeof(address))
                  : -1;
  absl::StrAppend(&out, "bind=", ErrnoName(rc));
  UniqueFd client(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  address.sin_port = htons(port);
  rc = client ? connect(client.get(), reinterpret_cast<sockaddr*>(&address),
                        sizeof(address))
              : -1;
  absl::StrAppend(&out, " connect=", ErrnoName(rc));
  return out;
}

TEST(LandlockTcpTest, DenyTcpRefusesBindAndConnect) {
  absl::StatusOr<int> abi = LandlockAbiVersion();
  ASSERT_TRUE(abi.ok()) << abi.status();
  if (*abi < 4) GTEST_SKIP() << "Landlock ABI " << *abi << " has no TCP rules";
  int port = 0;
  absl::StatusOr<UniqueFd> listener = ListenOnLoopback(&port);
  ASSERT_TRUE(listener.ok()) << listener.status();

  absl::StatusOr<std::string> denied = RunInChild([port]() -> std::string {
    LandlockRuleset ruleset = LandlockRuleset::ForWrites(1);
    ruleset.DenyTcp();
    if (!ruleset.tcp_denied()) return "tcp not denied";
    absl::Status status = ruleset.Enforce();
    return status.ok() ? TcpAttempts(port) : status.ToString();
  });
  absl::StatusOr<std::string> control =
      RunInChild([port] { return TcpAttempts(port); });
  ASSERT_TRUE(denied.ok()) << denied.status();
  ASSERT_TRUE(control.ok()) << control.status();
  EXPECT_EQ(*denied, "bind=EACCES connect=EACCES");
  EXPECT_EQ(*control, "bind=0 connect=0");
}

TEST(LandlockTcpTest, AllowTcpConnectKeepsOnlyThatPort) {
  absl::StatusOr<int> abi = LandlockAbiVersion();
  ASSERT_TRUE(abi.ok()) << abi.status();
  if (*abi < 4) GTEST_SKIP() << "Landlock ABI " << *abi << " has no TCP rules";
  int allowed = 0, other = 0;
  absl::StatusOr<UniqueFd> allowed_listener = ListenOnLoopback(&allowed);
  absl::StatusOr<UniqueFd> other_listener = ListenOnLoopback(&other);
  ASSERT_TRUE(allowed_listener.ok()) << allowed_listener.status();
  ASSERT_TRUE(other_listener.ok()) << other_listener.status();

  absl::StatusOr<std::string> result = RunInChild([&]() -> std::string {
    LandlockRuleset ruleset = LandlockRuleset::ForWrites(1);
    ruleset.AllowTcpConnect(allowed);
    if (!ruleset.tcp_denied()) return "tcp not handled";
    absl::Status status = ruleset.Enforce();
    if (!status.ok()) return status.ToString();
    return absl::StrCat(TcpAttempts(allowed), " / ", TcpAttempts(other));
  });
  ASSERT_TRUE(result.ok()) << result.status();
  // Bind is refused either way; connect only to the allowed port.
  EXPECT_EQ(*result, "bind=EACCES connect=0 / bind=EACCES connect=EACCES");
}

TEST(LandlockTcpTest, AllowTcpConnectRefusesAPortOutOfRange) {
  LandlockRuleset ruleset = LandlockRuleset::ForWritesWithAbi(4, 1);
  ruleset.AllowTcpConnect(70000);
  absl::Status status = ruleset.Enforce();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("70000"));
}

TEST(LandlockTcpTest, DenyTcpIsANoOpBelowAbi4) {
  LandlockRuleset ruleset = LandlockRuleset::ForWritesWithAbi(3, 1);
  ruleset.DenyTcp();
  EXPECT_FALSE(ruleset.tcp_denied());
}

}  // namespace
}  // namespace garuda
