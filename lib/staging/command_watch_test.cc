#include "lib/staging/command_watch.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <string>

#include "gtest/gtest.h"

namespace garuda {
namespace {

// What the watching thread reported, waited for with a deadline.
struct Seen {
  std::mutex mu;
  std::condition_variable changed;
  bool started = false;
  std::string output;
  int ticks = 0;

  template <typename Done>
  bool WaitFor(Done done) {
    std::unique_lock<std::mutex> lock(mu);
    return changed.wait_for(lock, std::chrono::seconds(10),
                            [&] { return done(); });
  }
};

CommandWatch Watching(Seen* seen, const CancelFlag* cancel) {
  CommandWatch watch;
  watch.cancel = cancel;
  watch.tick = absl::Milliseconds(10);
  watch.on_started = [seen] {
    std::lock_guard<std::mutex> lock(seen->mu);
    seen->started = true;
    seen->changed.notify_all();
  };
  watch.on_output = [seen](int stream, absl::string_view data) {
    std::lock_guard<std::mutex> lock(seen->mu);
    seen->output += stream == 2 ? "[err]" : "[out]";
    seen->output.append(data.data(), data.size());
    seen->changed.notify_all();
  };
  watch.on_tick = [seen](absl::Duration) {
    std::lock_guard<std::mutex> lock(seen->mu);
    ++seen->ticks;
    seen->changed.notify_all();
  };
  return watch;
}

// The stager's end, as the request carries it.
WatchSocket StagerEnd(const CommandWatcher& watcher) {
  absl::StatusOr<WatchSocket> end = WatchSocket::Adopt(
      UniqueFd(::fcntl(watcher.peer_fd(), F_DUPFD_CLOEXEC, 3)));
  EXPECT_TRUE(end.ok()) << end.status();
  return *std::move(end);
}

bool Readable(int fd, int timeout_ms) {
  struct pollfd p = {fd, POLLIN, 0};
  return ::poll(&p, 1, timeout_ms) == 1;
}

TEST(CommandWatchTest, StartOutputAndTicksReachTheAgent) {
  Seen seen;
  CancelFlag cancel;
  auto watcher = CommandWatcher::Start(Watching(&seen, &cancel));
  ASSERT_TRUE(watcher.ok()) << watcher.status();
  WatchSocket stager = StagerEnd(**watcher);
  stager.Started();
  stager.Output(1, "hello\n");
  stager.Output(2, "oops\n");
  EXPECT_TRUE(seen.WaitFor([&] {
    return seen.started && seen.output == "[out]hello\n[err]oops\n" &&
           seen.ticks >= 2;
  })) << seen.output;
}

TEST(CommandWatchTest, TheStopIsSentOnlyOnceCancelled) {
  Seen seen;
  CancelFlag cancel;
  auto watcher = CommandWatcher::Start(Watching(&seen, &cancel));
  ASSERT_TRUE(watcher.ok());
  WatchSocket stager = StagerEnd(**watcher);
  stager.Started();
  // Negative control: the thread has gone round its loop (ticks come from
  // it) and, not cancelled, sent nothing.
  ASSERT_TRUE(seen.WaitFor([&] { return seen.ticks >= 3; }));
  EXPECT_FALSE(Readable(stager.fd(), 0));
  EXPECT_FALSE((*watcher)->stop_sent());

  cancel.Cancel();
  ASSERT_TRUE(Readable(stager.fd(), 10000));
  char byte = 0;
  EXPECT_EQ(::recv(stager.fd(), &byte, 1, 0), 1);
  EXPECT_EQ(byte, kWatchStop);
  EXPECT_TRUE((*watcher)->stop_sent());
}

TEST(CommandWatchTest, TheAgentGoneIsAStopToo) {
  Seen seen;
  std::optional<WatchSocket> stager;
  {
    auto watcher = CommandWatcher::Start(Watching(&seen, nullptr));
    ASSERT_TRUE(watcher.ok());
    stager.emplace(StagerEnd(**watcher));
    EXPECT_FALSE(Readable(stager->fd(), 0));
  }
  // The agent's end closed: readable (end of file), so the run stops.
  EXPECT_TRUE(Readable(stager->fd(), 0));
  // The stager's sends never block or raise SIGPIPE on a closed peer.
  stager->Output(1, "late");
}

TEST(CommandWatchTest, OnlyASeqpacketSocketIsTaken) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  UniqueFd pipe_read(fds[0]), pipe_write(fds[1]);
  absl::StatusOr<WatchSocket> pipe = WatchSocket::Adopt(std::move(pipe_write));
  EXPECT_TRUE(absl::IsInvalidArgument(pipe.status())) << pipe.status();
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  UniqueFd other(fds[1]);
  absl::StatusOr<WatchSocket> stream = WatchSocket::Adopt(UniqueFd(fds[0]));
  EXPECT_TRUE(absl::IsInvalidArgument(stream.status())) << stream.status();
  // Control: a seqpacket pair is taken.
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds), 0);
  UniqueFd kept(fds[1]);
  EXPECT_TRUE(WatchSocket::Adopt(UniqueFd(fds[0])).ok());
}

}  // namespace
}  // namespace garuda
