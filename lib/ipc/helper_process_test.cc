#include "lib/ipc/helper_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/ipc/ipc_test.pb.h"

namespace garuda {
namespace ipc {
namespace {

using ipc_test::EchoReply;
using ipc_test::EchoRequest;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

std::string EchoHelperPath() {
  return JoinPath(
      JoinPath(std::getenv("TEST_SRCDIR"), std::getenv("TEST_WORKSPACE")),
      "lib/ipc/echo_helper");
}

HelperOptions EchoOptions() {
  HelperOptions options;
  options.argv = {EchoHelperPath(), "--channel-fd=3"};
  return options;
}

// The descriptors open in a helper started with `options`, as it lists them
// from its /proc/self/fd.
std::vector<int> ChildFds(const HelperOptions& options) {
  auto helper = HelperProcess::Spawn(options);
  EXPECT_TRUE(helper.ok()) << helper.status();
  if (!helper.ok()) return {};
  EchoRequest list;
  list.set_seq(1);
  list.mutable_list_fds();
  EchoReply reply;
  absl::Status status = (*helper)->Call(list, &reply);
  EXPECT_TRUE(status.ok()) << status;
  return {reply.fd_list().fds().begin(), reply.fd_list().fds().end()};
}

class HelperProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto helper = HelperProcess::Spawn(EchoOptions());
    ASSERT_TRUE(helper.ok()) << helper.status();
    helper_ = std::move(*helper);
  }
  EchoRequest Next() {
    EchoRequest request;
    request.set_seq(++seq_);
    return request;
  }
  absl::Status Call(const EchoRequest& request, EchoReply* reply,
                    std::vector<int> fds = {}) {
    return helper_->Call(request, reply, nullptr, fds);
  }

  std::unique_ptr<HelperProcess> helper_;
  uint64_t seq_ = 0;
};

TEST_F(HelperProcessTest, ConversationAndCleanStop) {
  EchoRequest open = Next();
  open.mutable_open();
  EchoReply reply;
  ASSERT_TRUE(Call(open, &reply).ok());
  EXPECT_TRUE(reply.has_opened());
  EchoRequest echo = Next();
  echo.mutable_echo()->set_text("hello helper");
  ASSERT_TRUE(Call(echo, &reply).ok());
  EXPECT_EQ(reply.echoed().text(), "hello helper");
  EXPECT_TRUE(helper_->CheckAlive().ok());
  EXPECT_TRUE(helper_->Stop().ok());
  EXPECT_EQ(helper_->exit_description(),
            absl::StrCat("echo_helper (pid ", helper_->pid(),
                         ") exited with status 0"));
}

TEST_F(HelperProcessTest, DescriptorsBothWaysAcrossProcesses) {
  EchoRequest open = Next();
  open.mutable_open();
  EchoReply reply;
  ASSERT_TRUE(Call(open, &reply).ok());

  int ends[2];
  ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
  UniqueFd read_end(ends[0]), write_end(ends[1]);
  EchoRequest write = Next();
  write.mutable_write_to_fd()->set_text("from another process");
  ASSERT_TRUE(Call(write, &reply, {write_end.get()}).ok());
  write_end.Reset();
  auto text = ReadAll(read_end.get());
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "from another process");

  EchoRequest make = Next();
  make.mutable_make_pipe()->set_text("pipe from the helper");
  std::vector<UniqueFd> fds;
  ASSERT_TRUE(helper_->Call(make, &reply, &fds).ok());
  ASSERT_EQ(fds.size(), 1u);
  text = ReadAll(fds[0].get());
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "pipe from the helper");
}

TEST_F(HelperProcessTest, CrashOnAVerbIsReportedAtOnce) {
  EchoRequest crash = Next();
  crash.mutable_crash()->set_signal(SIGKILL);
  EchoReply reply;
  absl::Status status = Call(crash, &reply);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(absl::StrCat("echo_helper (pid ", helper_->pid(),
                                     ") was killed by signal 9")));
  // Later calls say the same at once.
  EXPECT_EQ(helper_->CheckAlive().code(), absl::StatusCode::kUnavailable);
  status = Call(Next(), &reply);
  EXPECT_THAT(std::string(status.message()), HasSubstr("killed by signal 9"));
}

TEST_F(HelperProcessTest, SegfaultIsReported) {
  // No core file in the test's folder.
  struct rlimit no_core = {0, 0};
  ASSERT_EQ(::prlimit(helper_->pid(), RLIMIT_CORE, &no_core, nullptr), 0);
  EchoRequest crash = Next();
  crash.mutable_crash()->set_signal(SIGSEGV);
  EchoReply reply;
  absl::Status status = Call(crash, &reply);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("was killed by signal 11 (SIGSEGV)"));
}

TEST_F(HelperProcessTest, ExitStatusIsReported) {
  EchoRequest exit = Next();
  exit.mutable_exit()->set_status(3);
  EchoReply reply;
  absl::Status status = Call(exit, &reply);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_EQ(status.message(), absl::StrCat("echo_helper (pid ", helper_->pid(),
                                           ") exited with status 3"));
  EXPECT_EQ(helper_->Stop().code(), absl::StatusCode::kUnavailable);
}

TEST_F(HelperProcessTest, KilledMidConversationIsNotWaitedOn) {
  int ends[2];
  ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
  UniqueFd read_end(ends[0]), write_end(ends[1]);
  pid_t pid = helper_->pid();
  // Kills the helper once it says (through the pipe) that it is inside the
  // "hang" handler, so the Call below is waiting for a reply that never
  // comes. No sleeps: the pipe orders the kill after the request.
  std::thread killer([&read_end, pid] {
    char byte;
    if (ReadExact(read_end.get(), &byte, 1).ok()) ::kill(pid, SIGKILL);
  });
  EchoRequest hang = Next();
  hang.mutable_hang();
  EchoReply reply;
  absl::Status status = Call(hang, &reply, {write_end.get()});
  write_end.Reset();
  killer.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(absl::StrCat("echo_helper (pid ", pid,
                                     ") was killed by signal 9")));
}

TEST_F(HelperProcessTest, StopKillsAHelperThatDoesNotExit) {
  int ends[2];
  ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
  UniqueFd read_end(ends[0]), write_end(ends[1]);
  EchoRequest hang = Next();
  hang.mutable_hang();
  ASSERT_TRUE(helper_->channel().Send(hang, {write_end.get()}).ok());
  write_end.Reset();
  char byte;
  ASSERT_TRUE(ReadExact(read_end.get(), &byte, 1).ok());  // It hangs now.
  absl::Status status = helper_->Stop(absl::Milliseconds(50));
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("was killed by signal 9 (SIGKILL) after it did not "
                        "exit within 50ms"));
}

TEST_F(HelperProcessTest, DestructorKillsAndReaps) {
  pid_t pid = helper_->pid();
  helper_.reset();
  int status;
  EXPECT_EQ(::waitpid(pid, &status, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);  // Reaped: no zombie left.
}

// A helper destroyed (killed) never sees its channel end, so it never does
// what it does at an orderly end: here, create a file.
TEST(HelperProcessEndTest, DestroyedHelperNeverSeesItsChannelEnd) {
  // This process's own name: runs of the test may share TEST_TMPDIR.
  const std::string marker = JoinPath(
      std::getenv("TEST_TMPDIR"), absl::StrCat("at-end-", ::getpid()));
  ::unlink(marker.c_str());
  for (int i = 0; i < 20; ++i) {
    HelperOptions options = EchoOptions();
    options.argv.push_back("--at-end=" + marker);
    auto helper = HelperProcess::Spawn(options);
    ASSERT_TRUE(helper.ok()) << helper.status();
    EchoRequest open;
    open.set_seq(1);
    open.mutable_open();
    EchoReply reply;
    ASSERT_TRUE((*helper)->Call(open, &reply).ok());
    ASSERT_TRUE(reply.has_opened()) << reply.DebugString();
    helper->reset();  // reaped when this returns: it runs no more code
    ASSERT_NE(::access(marker.c_str(), F_OK), 0) << "try " << i;
  }
  // Negative control: the same helper stopped in order (its channel closed
  // first) does its orderly end.
  HelperOptions options = EchoOptions();
  options.argv.push_back("--at-end=" + marker);
  auto helper = HelperProcess::Spawn(options);
  ASSERT_TRUE(helper.ok()) << helper.status();
  ASSERT_TRUE((*helper)->Stop(absl::Seconds(30)).ok());
  EXPECT_EQ(::access(marker.c_str(), F_OK), 0);
}

TEST_F(HelperProcessTest, ProtocolErrorEndsTheHelper) {
  EchoRequest echo = Next();
  echo.mutable_echo()->set_text("before open");
  EchoReply reply;
  ASSERT_TRUE(Call(echo, &reply).ok());
  ASSERT_TRUE(reply.has_error());
  EXPECT_THAT(reply.error().message(),
              HasSubstr("verb 'echo' is not allowed in state 'new'"));
  // The helper ends its side: the next call reports its exit.
  absl::Status status = Call(Next(), &reply);
  EXPECT_THAT(std::string(status.message()), HasSubstr("exited with status 1"));
}

// Only 0, 1, 2 and the channel are open in a helper, even when the parent
// holds descriptors opened without O_CLOEXEC.
TEST(HelperProcessFdTest, ChildHasOnlyStdioAndTheChannel) {
  int leaky = ::open("/dev/null", O_RDONLY);  // No O_CLOEXEC on purpose.
  ASSERT_GE(leaky, 0);
  UniqueFd leaky_fd(leaky);
  // And one at a number well above the channel's.
  UniqueFd high_leaky_fd(::fcntl(leaky, F_DUPFD, 40));
  ASSERT_TRUE(high_leaky_fd.valid());
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);  // No O_CLOEXEC on purpose.
  UniqueFd pipe_read(ends[0]), pipe_write(ends[1]);

  EXPECT_THAT(ChildFds(EchoOptions()), UnorderedElementsAre(0, 1, 2, 3));
}

// Negative control: the listing does see a descriptor that is let through.
TEST(HelperProcessFdTest, InheritedDescriptorShowsInTheListing) {
  UniqueFd opened(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(opened.valid());
  // Above 3, where the channel goes.
  UniqueFd leaky_fd(::fcntl(opened.get(), F_DUPFD_CLOEXEC, 40));
  int leaky = leaky_fd.get();
  ASSERT_GE(leaky, 40);
  HelperOptions options = EchoOptions();
  options.inherit_fds = {leaky};
  EXPECT_THAT(ChildFds(options), UnorderedElementsAre(0, 1, 2, 3, leaky));
}

TEST(HelperProcessSpawnTest, OtherChannelFdNumber) {
  HelperOptions options;
  options.argv = {EchoHelperPath(), "--channel-fd=7"};
  options.child_channel_fd = 7;
  EXPECT_THAT(ChildFds(options), UnorderedElementsAre(0, 1, 2, 7));
}

// A terminal's Ctrl-C goes to the foreground process group: a helper that
// leads its own group is not in it (tests/agent checks the signal itself).
TEST(HelperProcessSpawnTest, NewProcessGroup) {
  HelperOptions options = EchoOptions();
  options.new_process_group = true;
  auto own = HelperProcess::Spawn(options);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(::getpgid((*own)->pid()), (*own)->pid());
  EXPECT_NE(::getpgid((*own)->pid()), ::getpgrp());
  // Negative control: without the option it shares our group.
  auto shared = HelperProcess::Spawn(EchoOptions());
  ASSERT_TRUE(shared.ok()) << shared.status();
  EXPECT_EQ(::getpgid((*shared)->pid()), ::getpgrp());
}

TEST(HelperProcessSpawnTest, MissingProgramIsAnErrorFromSpawn) {
  HelperOptions options;
  options.argv = {"/nonexistent/garuda-helper", "--channel-fd=3"};
  auto helper = HelperProcess::Spawn(options);
  EXPECT_EQ(helper.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(helper.status().message()),
              HasSubstr("execv(/nonexistent/garuda-helper)"));
}

TEST(HelperProcessSpawnTest, BadOptionsAreRefused) {
  HelperOptions options = EchoOptions();
  options.child_channel_fd = 1;
  EXPECT_EQ(HelperProcess::Spawn(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = EchoOptions();
  options.inherit_fds = {3};
  EXPECT_EQ(HelperProcess::Spawn(options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options = EchoOptions();
  options.inherit_fds = {987654};
  EXPECT_EQ(HelperProcess::Spawn(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ChannelFromFdTest, RefusesWhatIsNotAUnixStreamSocket) {
  int ends[2];
  ASSERT_EQ(::pipe2(ends, O_CLOEXEC), 0);
  UniqueFd read_end(ends[0]), write_end(ends[1]);
  auto channel = ChannelFromFd(read_end.get());
  EXPECT_EQ(channel.status().code(), absl::StatusCode::kInvalidArgument)
      << channel.status();  // ENOTSOCK
  EXPECT_THAT(std::string(channel.status().message()),
              HasSubstr(absl::StrCat("channel descriptor ", read_end.get())));
  EXPECT_FALSE(ChannelFromFd(987654).ok());
}

TEST(ChannelFromFdTest, TakesASocketAndMarksItCloseOnExec) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);  // No CLOEXEC.
  UniqueFd other(pair[1]);
  auto channel = ChannelFromFd(pair[0]);
  ASSERT_TRUE(channel.ok()) << channel.status();
  EXPECT_EQ(::fcntl(channel->fd(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
}

TEST(DescribeWaitStatusTest, Forms) {
  EXPECT_EQ(DescribeWaitStatus(3 << 8), "exited with status 3");
  EXPECT_EQ(DescribeWaitStatus(SIGKILL), "was killed by signal 9 (SIGKILL)");
}

}  // namespace
}  // namespace ipc
}  // namespace garuda

namespace garuda::ipc {
namespace {

// The executable a process runs, from /proc/PID/exe.
std::string ExeOf(pid_t pid) {
  char target[4096];
  ssize_t n = ::readlink(absl::StrCat("/proc/", pid, "/exe").c_str(), target,
                         sizeof target - 1);
  return n < 0 ? "" : std::string(target, static_cast<size_t>(n));
}

// A pending helper is a fork of this process that has not exec'd: it runs
// the helper's program only after Start(), and only the channel, the two
// pipes and 0, 1, 2 are open in it while it waits.
TEST(PendingHelperTest, ExecsOnlyAtStartAndHoldsNothingElseMeanwhile) {
  // A descriptor of ours that the waiting child must not keep.
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  absl::StatusOr<std::unique_ptr<PendingHelper>> pending =
      PendingHelper::Fork(EchoOptions());
  ASSERT_TRUE(pending.ok()) << pending.status();
  const pid_t pid = (*pending)->pid();
  EXPECT_EQ(ExeOf(pid), ExeOf(::getpid()));  // not exec'd yet
  // The waiting child closed ours: the pipe's write end is ours alone, so
  // a read end sees the end of file once we close it.
  ::close(pipe_fds[1]);
  char byte;
  EXPECT_EQ(::read(pipe_fds[0], &byte, 1), 0);
  ::close(pipe_fds[0]);
  absl::StatusOr<std::unique_ptr<HelperProcess>> helper = (*pending)->Start();
  ASSERT_TRUE(helper.ok()) << helper.status();
  EXPECT_EQ((*helper)->pid(), pid);
  EXPECT_NE(ExeOf(pid).find("echo_helper"), std::string::npos) << ExeOf(pid);
  EchoRequest open;
  open.set_seq(1);
  open.mutable_open();
  EchoReply reply;
  ASSERT_TRUE((*helper)->Call(open, &reply).ok());
  EchoRequest echo;
  echo.set_seq(2);
  echo.mutable_echo()->set_text("late");
  ASSERT_TRUE((*helper)->Call(echo, &reply).ok());
  EXPECT_EQ(reply.echoed().text(), "late");
  EXPECT_FALSE((*pending)->Start().ok());  // once only
}

TEST(PendingHelperTest, DroppedWithoutStartItNeverExecs) {
  absl::StatusOr<std::unique_ptr<PendingHelper>> pending =
      PendingHelper::Fork(EchoOptions());
  ASSERT_TRUE(pending.ok()) << pending.status();
  const pid_t pid = (*pending)->pid();
  pending->reset();  // closes the go pipe and reaps the child
  EXPECT_NE(::kill(pid, 0), 0);
  EXPECT_EQ(errno, ESRCH);
}

}  // namespace
}  // namespace garuda::ipc
