// The proxy when no thread can be made for a connection (the person's
// process limit reached): that connection ends, the proxy and its other
// tunnels go on. The proxy runs in a child process in a pids cgroup of its
// own, whose limit the test moves.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/netproxy/echo_origin.h"
#include "lib/netproxy/server.h"
#include "lib/rules/domain_rules.h"
#include "sandbox/cgroup.h"

namespace garuda {
namespace netproxy {
namespace {

// What comes until `until` ends it or the peer closes (10 s at most).
std::string ReadFor(int fd, absl::string_view until) {
  std::string got;
  ReadToEnd(fd, &got, until);
  return got;
}

// A tunnel to the origin: CONNECT, its answer, then `probe` echoed back.
// What came back (empty when the tunnel ended first).
std::string Tunnel(int fd, uint16_t origin, const std::string& probe) {
  const std::string connect =
      absl::StrCat("CONNECT allowed.test:", origin, " HTTP/1.1\r\n\r\n");
  ::send(fd, connect.data(), connect.size(), MSG_NOSIGNAL);
  std::string answer = ReadFor(fd, "\r\n\r\n");
  if (!absl::StartsWith(answer, "HTTP/1.1 200")) return "";
  ::send(fd, probe.data(), probe.size(), MSG_NOSIGNAL);
  return ReadFor(fd, probe);
}

// Waits until the cgroup counts `tasks` threads (10 s at most).
bool WaitForTasks(const std::string& group, const std::string& tasks) {
  const std::string current = JoinPath(group, "pids.current");
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (absl::StripAsciiWhitespace(ReadFileToString(current).value_or("")) == tasks) return true;
    struct pollfd none = {-1, 0, 0};
    ::poll(&none, 0, 5);
  }
  return false;
}

TEST(ProxyThreadsTest, NoThreadForAConnectionEndsItNotTheProxy) {
  CgroupPlace place = FindCgroupPlace(CgroupController::kPids);
  if (!place.available) GTEST_SKIP() << "no pids cgroup: " << place.reason;
  // Everything the child needs, made before it exists: no thread may run in
  // this process at the fork.
  UniqueFd origin_listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const uint16_t origin_port = BindLoopback(origin_listener.get());
  UniqueFd proxy_listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const uint16_t proxy_port = BindLoopback(proxy_listener.get());
  const ProxyOptions options = AllowedTestOptions(origin_port);
  int go[2];
  ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
  // pids.max 4: the child's main thread, one tunnel's two threads, and the
  // first thread of one more connection.
  CommandCgroups cgroups = CommandCgroups::Create(0, 3, true);
  ASSERT_TRUE(cgroups.pids()) << cgroups.Note();
  const std::string group = cgroups.Paths().back();
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(go[1]);
    char byte;
    if (::read(go[0], &byte, 1) != 1) ::_exit(3);
    ProxyServer server(options);
    ::_exit(server.Serve(proxy_listener.get()).ok() ? 0 : 2);
  }
  ::close(go[0]);
  cgroups.AddProcess(child);
  ASSERT_TRUE(cgroups.pids()) << cgroups.Note();
  ASSERT_EQ(::write(go[1], "g", 1), 1);
  ::close(go[1]);
  proxy_listener.Reset();
  EchoOrigin origin(std::move(origin_listener));

  UniqueFd first = ConnectLoopback(proxy_port);
  EXPECT_EQ(Tunnel(first.get(), origin_port, "one\n"), "one\n");
  // A second connection gets its thread but not its tunnel's second one:
  // it ends, the proxy stays.
  {
    UniqueFd second = ConnectLoopback(proxy_port);
    EXPECT_EQ(Tunnel(second.get(), origin_port, "two\n"), "");
  }
  EXPECT_EQ(::waitpid(child, nullptr, WNOHANG), 0) << "the proxy ended";
  ASSERT_TRUE(WaitForTasks(group, "3"));
  // With no room for even a connection's first thread, a connection is
  // closed unanswered; the proxy stays.
  {
    UniqueFd limit(::open(JoinPath(group, "pids.max").c_str(), O_WRONLY | O_CLOEXEC));
    ASSERT_EQ(::write(limit.get(), "3", 1), 1);
  }
  {
    UniqueFd refused = ConnectLoopback(proxy_port);
    EXPECT_EQ(Tunnel(refused.get(), origin_port, "none\n"), "");
  }
  EXPECT_EQ(::waitpid(child, nullptr, WNOHANG), 0) << "the proxy ended";
  // The first tunnel still carries bytes.
  ::send(first.get(), "again\n", 6, MSG_NOSIGNAL);
  EXPECT_EQ(ReadFor(first.get(), "again\n"), "again\n");
  first.Reset();
  // Once its threads have ended, a new tunnel works.
  ASSERT_TRUE(WaitForTasks(group, "1"));
  UniqueFd third = ConnectLoopback(proxy_port);
  EXPECT_EQ(Tunnel(third.get(), origin_port, "three\n"), "three\n");
  third.Reset();
  EXPECT_EQ(::waitpid(child, nullptr, WNOHANG), 0) << "the proxy ended";
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the proxy had ended before: status " << status;
}

}  // namespace
}  // namespace netproxy
}  // namespace garuda
