#include "lib/staging/watch_test_util.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace garuda::testing {
namespace {

bool Put(const std::string& file, const std::string& text) {
  int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
  bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) ==
                           static_cast<ssize_t>(text.size());
  if (fd >= 0) ::close(fd);
  return ok;
}

}  // namespace

void Shell(const std::string& dir, const std::string& command) {
  ASSERT_EQ(std::system(absl::StrCat("cd '", dir, "' && ", command).c_str()), 0)
      << command;
}

bool EnterUserNamespaceWithWatchLimit(uid_t uid, gid_t gid, int watches) {
  return ::unshare(CLONE_NEWUSER) == 0 && Put("/proc/self/setgroups", "deny") &&
         Put("/proc/self/uid_map", absl::StrCat("0 ", uid, " 1")) &&
         Put("/proc/self/gid_map", absl::StrCat("0 ", gid, " 1")) &&
         Put("/proc/sys/user/max_inotify_watches", absl::StrCat(watches));
}

}  // namespace garuda::testing
