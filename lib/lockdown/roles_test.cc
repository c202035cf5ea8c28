#include "lib/lockdown/roles.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/lockdown/test_child.h"

namespace garuda {
namespace {

std::string NewFolder(const std::string& name) {
  std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
  ::mkdir(path.c_str(), 0700);
  return path;
}

std::string Create(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) ::close(fd);
  return fd >= 0 ? "wrote" : ErrnoName(fd);
}

// In a child: `lock_down` (if any) with `writable` only, then a create in
// `writable` and one in `outside`. Returns "<inside> <outside>".
using LockDownIn = std::function<absl::Status(const std::string& writable)>;

std::string CreateInsideAndOutside(const LockDownIn& lock_down,
                                   const std::string& writable,
                                   const std::string& outside) {
  absl::StatusOr<std::string> result = RunInChild([&]() -> std::string {
    if (lock_down) {
      absl::Status locked = lock_down(writable);
      if (!locked.ok()) return locked.ToString();
    }
    return absl::StrCat(Create(writable + "/file"), " ",
                        Create(outside + "/file"));
  });
  return result.ok() ? *result : result.status().ToString();
}

TEST(RoleLockdownTest, EachRoleWritesOnlyWhatItIsGiven) {
  for (const auto& [name, role] :
       {std::pair{std::string("auditor"), Role::kAuditor},
        {std::string("budgeter"), Role::kBudgeter},
        {std::string("applier"), Role::kApplier},
        {std::string("guard"), Role::kStagingGuard},
        {std::string("agent"), Role::kAgent}}) {
    SCOPED_TRACE(name);
    std::string writable = NewFolder(name + "-writable");
    std::string outside = NewFolder(name + "-outside");
    auto lock_down = [role = role](const std::string& path) {
      RoleNeeds needs;
      needs.writable_paths = {path};
      return LockDownAs(role, needs, {}).status();
    };
    EXPECT_EQ(CreateInsideAndOutside(lock_down, writable, outside),
              "wrote EACCES");
    // Negative control: the same child without the lockdown writes outside.
    std::string control = NewFolder(name + "-control");
    EXPECT_EQ(CreateInsideAndOutside(nullptr, writable, control),
              "wrote wrote");
  }
}

constexpr Role kEveryRole[] = {
    Role::kAuditor,   Role::kBudgeter,     Role::kApplier, Role::kAudit,
    Role::kCodeTools, Role::kCodeToolsLsp, Role::kAgent,   Role::kAcpFront,
    Role::kStager,    Role::kStagingGuard, Role::kProxy};

TEST(RoleTableTest, EveryRoleHasARow) {
  for (Role role : kEveryRole) EXPECT_FALSE(RoleName(role).empty());
}

// A kernel without Landlock, acted out by the probe: every role that
// confines writes refuses, names what is missing and the fix, and changes
// nothing; with --accept-weaker-lockdown it goes on and says so.
std::string LockDownWithoutLandlock(Role role, const std::string& why) {
  absl::StatusOr<std::string> result = RunInChild([&]() -> std::string {
    RoleNeeds needs;
    if (role == Role::kAuditor || role == Role::kBudgeter ||
        role == Role::kStagingGuard || role == Role::kAgent) {
      needs.writable_paths = {std::getenv("TEST_TMPDIR")};
    }
    std::string said;
    WeakerLockdown weaker{why, [&](const std::string& line) { said = line; }};
    absl::StatusOr<LockdownReport> done =
        lockdown_internal::LockDownAsWithProbe(
            role, needs, weaker, [] { return absl::StatusOr<int>(0); });
    if (!done.ok()) return std::string(done.status().message());
    return absl::StrCat("said: ", said, "\nsummary: ", done->summary);
  });
  return result.ok() ? *result : result.status().ToString();
}

TEST(RoleTableTest, WithoutLandlockEveryConfiningRoleRefuses) {
  for (Role role : kEveryRole) {
    if (role == Role::kStager) continue;  // no Landlock by design
    SCOPED_TRACE(RoleName(role));
    std::string refused = LockDownWithoutLandlock(role, "");
    EXPECT_NE(refused.find(
                  absl::StrCat("cannot lock down the ", RoleName(role), ": ")),
              std::string::npos)
        << refused;
    EXPECT_NE(refused.find("fix: boot Linux 5.13"), std::string::npos);
    EXPECT_NE(refused.find("--accept-weaker-lockdown WHY"), std::string::npos);
  }
}

TEST(RoleTableTest, NegativeControlWithAcceptWeakerEveryRoleGoesOnAndSaysSo) {
  for (Role role : kEveryRole) {
    if (role == Role::kStager) continue;
    SCOPED_TRACE(RoleName(role));
    std::string served = LockDownWithoutLandlock(role, "old kernel");
    EXPECT_NE(served.find("said: weaker lockdown (--accept-weaker-lockdown): "
                          "no Landlock"),
              std::string::npos)
        << served;
    EXPECT_NE(served.find("accepted because: old kernel"), std::string::npos);
  }
}

TEST(RoleTableTest, RoleByDesignWithoutLandlockIsNotCalledWeaker) {
  std::string builder = LockDownWithoutLandlock(Role::kStager, "");
  EXPECT_NE(builder.find("summary: stager locked down"), std::string::npos)
      << builder;
  EXPECT_EQ(builder.find("said: weaker"), std::string::npos) << builder;
}

TEST(RoleTableTest, NeedsARoleCannotHaveAreRefused) {
  // Each refused before anything is applied, so in this process.
  RoleNeeds ports;
  ports.writable_paths = {"/tmp"};
  ports.tcp_connect_ports = {443};
  EXPECT_NE(LockDownAs(Role::kAuditor, ports, {})
                .status()
                .ToString()
                .find("has no network"),
            std::string::npos);
  RoleNeeds relative;
  relative.writable_paths = {"audit"};
  EXPECT_NE(LockDownAs(Role::kAuditor, relative, {})
                .status()
                .ToString()
                .find("must be absolute"),
            std::string::npos);
}

}  // namespace
}  // namespace garuda
