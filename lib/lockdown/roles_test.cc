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
       {std::pair<std::string, LockDownIn>{"auditor",
                                           [](const std::string& writable) {
                                             AuditorLockdown what;
                                             what.audit_folder = writable;
                                             return LockDownAuditor(what,
                                                                    nullptr);
                                           }},
        std::pair<std::string, LockDownIn>{"budgeter",
                                           [](const std::string& writable) {
                                             BudgeterLockdown what;
                                             what.session_folder = writable;
                                             return LockDownBudgeter(what,
                                                                     nullptr);
                                           }},
        std::pair<std::string, LockDownIn>{
            "applier", [](const std::string& writable) {
              ApplierLockdown what;
              what.writable = {writable};
              return LockDownApplier(what, nullptr);
            }}}) {
    SCOPED_TRACE(name);
    std::string writable = NewFolder(name + "-writable");
    std::string outside = NewFolder(name + "-outside");
    EXPECT_EQ(CreateInsideAndOutside(role, writable, outside), "wrote EACCES");
    // Negative control: the same child without the lockdown writes outside.
    std::string control = NewFolder(name + "-control");
    EXPECT_EQ(CreateInsideAndOutside(nullptr, writable, control),
              "wrote wrote");
  }
}

}  // namespace
}  // namespace garuda
