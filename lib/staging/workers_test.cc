#include "lib/staging/workers.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace garuda {
namespace {

struct Items {
  std::atomic<uint32_t> next;
  std::atomic<uint32_t> stop;
  std::atomic<uint32_t> done[100];
  std::atomic<int32_t> pid[100];
  std::atomic<uint32_t> child_took;
};

// Polls `done` (another process sets what it reads) until it holds, or
// fails with `what` once `timeout` has passed.
absl::Status WaitFor(const std::function<bool()>& done, const std::string& what,
                     absl::Duration timeout = absl::Seconds(30)) {
  absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat(what, " within ", absl::FormatDuration(timeout)));
    }
    ::usleep(100);
  }
  return absl::OkStatus();
}

class Workers : public ::testing::Test {
 protected:
  SharedMemory memory_{sizeof(Items)};
  Items* items = static_cast<Items*>(memory_.data());
  pid_t parent = ::getpid();
};

TEST_F(Workers, EveryItemIsTakenOnceAcrossTheProcesses) {
  ASSERT_NE(items, nullptr);
  absl::Status status = RunInProcesses(
      3,
      [&]() -> absl::Status {
        // This process waits for a worker's first item, so that the test
        // shows that workers took part.
        if (::getpid() == parent) {
          absl::Status took =
              WaitFor([&] { return items->child_took.load() != 0; },
                      "no worker process took an item");
          if (!took.ok()) return took;
        }
        for (;;) {
          uint32_t next = items->next.fetch_add(1);
          if (next >= 100) return absl::OkStatus();
          items->done[next].fetch_add(1);
          items->pid[next].store(::getpid());
          if (::getpid() != parent) items->child_took.store(1);
        }
      },
      &items->stop);
  ASSERT_TRUE(status.ok()) << status;
  int mine = 0;
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(items->done[i].load(), 1u) << i;
    if (items->pid[i].load() == ::getpid()) ++mine;
  }
  EXPECT_LT(mine, 100);
}

TEST_F(Workers, AWorkersErrorIsReportedAndStopsTheOthers) {
  ASSERT_NE(items, nullptr);
  absl::Status status = RunInProcesses(
      2,
      [&]() -> absl::Status {
        if (::getpid() != parent) {
          return absl::InternalError("item 7 could not be copied");
        }
        return WaitFor([&] { return items->stop.load() != 0; },
                       "the worker's error did not set the stop flag");
      },
      &items->stop);
  EXPECT_EQ(status.message(), "item 7 could not be copied");
}

// A forked worker confined by `enter_worker` (ConfineWritesBeneath) cannot
// create a file outside its folder, and says so; the negative control: the
// same worker without it can. This process (not a forked worker) stays
// unconfined either way.
TEST_F(Workers, AConfinedWorkerWritesOnlyBeneathItsFolder) {
  ASSERT_NE(items, nullptr);
  const char* tmp = std::getenv("TEST_TMPDIR");
  ASSERT_NE(tmp, nullptr);
  const std::string inside = absl::StrCat(tmp, "/confined-", parent);
  const std::string outside = absl::StrCat(tmp, "/outside-", parent);
  ASSERT_EQ(::mkdir(inside.c_str(), 0700), 0);
  ASSERT_EQ(::mkdir(outside.c_str(), 0700), 0);
  auto attempt = [&](const std::string& file) -> absl::Status {
    if (::getpid() == parent) return absl::OkStatus();
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
      return absl::ErrnoToStatus(errno, absl::StrCat("create ", file));
    ::close(fd);
    return absl::OkStatus();
  };
  absl::Status control = RunInProcesses(
      2, [&] { return attempt(outside + "/control"); }, &items->stop);
  EXPECT_TRUE(control.ok()) << control;
  items->stop.store(0);
  absl::Status confined = RunInProcesses(
      2, [&] { return attempt(outside + "/confined"); }, &items->stop,
      [&] { return ConfineWritesBeneath(inside); });
  // A worker's error comes back as its message (RunInProcesses).
  EXPECT_NE(confined.message().find("Permission denied"), std::string::npos)
      << confined;
  struct stat st;
  EXPECT_NE(::lstat((outside + "/confined").c_str(), &st), 0);
  items->stop.store(0);
  absl::Status allowed = RunInProcesses(
      2, [&] { return attempt(inside + "/allowed"); }, &items->stop,
      [&] { return ConfineWritesBeneath(inside); });
  EXPECT_TRUE(allowed.ok()) << allowed;
}

}  // namespace
}  // namespace garuda
