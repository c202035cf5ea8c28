// The top agent's client waits for each answer in a read that looks at the
// budgeter's pidfd every ipc::kWatchTick (ipc::HelperProcess::Call). The
// pidfd is what notices the budgeter's death when its end of the channel
// outlives it: here a background process of the shell that execs the
// budgeter holds that end, so no end of file ever comes. The negative control talks over the same socket
// without the pidfd, and only a receive timeout ends its wait.
#include "lib/budget/client.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/channel.h"
#include "lib/ipc/helper_process.h"

namespace garuda {
namespace budget {
namespace {

class HeldChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "heldXXXXXX");
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    ::setenv("HOME", templ.c_str(), 1);
  }
  // Closing the pipe ends the process that holds the channel end.
  void TearDown() override { release_.Reset(); }

  // The real budgeter, exec'd by a shell whose background `head` keeps the
  // budgeter's channel end (fd 3) open until `release_` is closed.
  std::unique_ptr<ipc::HelperProcess> StartWithHeldEnd(
      const std::string& session) {
    int ends[2];
    EXPECT_EQ(::pipe2(ends, O_CLOEXEC), 0);
    // Above the channel's number 3 and the standard streams.
    UniqueFd hold(::fcntl(ends[0], F_DUPFD_CLOEXEC, 20));
    ::close(ends[0]);
    release_ = UniqueFd(ends[1]);
    ipc::HelperOptions options;
    options.argv = {"/bin/sh",
                    "-c",
                    absl::StrCat("head -c 1 /dev/fd/", hold.get(),
                                 " >/dev/null & exec \"$0\" \"$@\""),
                    JoinPath(JoinPath(std::getenv("TEST_SRCDIR"),
                                      std::getenv("TEST_WORKSPACE")),
                             "cmd/garuda-budgeter/garuda-budgeter"),
                    "serve",
                    "--channel-fd=3",
                    "--session=" + session,
                    "--limit=10000"};
    options.channel = BudgeterChannelOptions();
    options.inherit_fds = {hold.get()};
    auto process = ipc::HelperProcess::Spawn(options);
    EXPECT_TRUE(process.ok()) << process.status();
    return process.ok() ? std::move(*process) : nullptr;
  }

  UniqueFd release_;
};

TEST_F(HeldChannelTest, DeathIsNoticedThoughItsChannelEndLivesOn) {
  auto budgeter = StartWithHeldEnd("held");
  ASSERT_TRUE(budgeter);
  BudgetClient client(budgeter.get());
  ASSERT_TRUE(client.Reserve(10, "turn", "before").ok());  // it serves
  ASSERT_EQ(::kill(budgeter->pid(), SIGKILL), 0);
  auto after = client.Reserve(10, "turn", "after");
  EXPECT_EQ(after.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(after.status().message(), "signal 9"))
      << after.status();
  EXPECT_FALSE(client.health().ok());
}

TEST_F(HeldChannelTest, NegativeControlWithoutThePidfdOnlyATimeoutEnds) {
  auto budgeter = StartWithHeldEnd("held-control");
  ASSERT_TRUE(budgeter);
  // The same socket, without the pidfd; a receive timeout stands in for a
  // wait that would otherwise never end.
  UniqueFd socket(::fcntl(budgeter->channel().fd(), F_DUPFD_CLOEXEC, 10));
  ASSERT_TRUE(socket.valid());
  struct timeval timeout = {1, 0};
  ASSERT_EQ(::setsockopt(socket.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout,
                         sizeof(timeout)),
            0);
  BudgetClient bare(ipc::Channel(std::move(socket), BudgeterChannelOptions()));
  ASSERT_TRUE(bare.Reserve(10, "turn", "before").ok());
  ASSERT_EQ(::kill(budgeter->pid(), SIGKILL), 0);
  auto after = bare.Reserve(10, "turn", "after");
  ASSERT_FALSE(after.ok());
  EXPECT_TRUE(absl::StrContains(after.status().message(), "receive timeout"))
      << after.status();
  EXPECT_FALSE(absl::StrContains(after.status().message(), "signal 9"));
}

}  // namespace
}  // namespace budget
}  // namespace garuda
