// A watched command through the real `garuda-stager serve` (direct, staged,
// and on the host through its on_host runner), driven by the agent's client
// (lib/staging/client.h RunWatched): the output arrives live, and a cancel
// stops the command and everything it started (STOPPED). Each stop has its
// control: the same command, not cancelled, runs to its end.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/helper_process.h"
#include "lib/staging/client.h"
#include "proto/stager_service.pb.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace {

std::string Program(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/garuda/cmd/", name, "/",
                      name);
}

void WriteText(const std::string& path, const std::string& text) {
  ASSERT_TRUE(WriteFileAtomically(path, text, 0644).ok()) << path;
}

class StagerWatchTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "watchXXXXXX");
    root_ = ::mkdtemp(templ.data());
    project_ = JoinPath(root_, "project");
    std::string home = JoinPath(root_, "home");
    std::string etc = JoinPath(root_, "etc");
    for (const std::string& dir : {project_, etc, JoinPath(home, ".garuda")}) {
      ASSERT_TRUE(MakeDirectories(dir, 0700).ok());
    }
    ::setenv("HOME", home.c_str(), 1);
    ::setenv("GARUDA_MANAGED_POLICY_DIR", etc.c_str(), 1);
    // With nobody at a terminal, the stager agrees to on_host commands by
    // this rule of the user's, which it reads itself.
    WriteText(JoinPath(home, ".garuda/settings.json"),
              R"({"permissions": {"allow": ["bash"]}})");
    WriteText(JoinPath(project_, "a.txt"), "old\n");
    RunOptions git;
    git.argv = {"/bin/sh", "-c",
                "git init -q && git add -A && git -c user.name=t -c "
                "user.email=t@t commit -qm base"};
    git.capture_output = true;
    ASSERT_TRUE(RunOnHost(git, project_).ok());

    mode_ = GetParam() == "staged" ? "staged" : "direct";
    on_host_ = GetParam() == "host";
    ipc::HelperOptions options;
    options.argv = {Program("garuda-stager"), "serve", "--channel-fd=3",
                    "--project", project_, "--mode", mode_, "--quiet"};
    absl::StatusOr<std::unique_ptr<ipc::HelperProcess>> helper =
        ipc::HelperProcess::Spawn(options);
    ASSERT_TRUE(helper.ok()) << helper.status();
    process_ = *std::move(helper);
    client_ = StagerChannelClient(process_.get());
    absl::StatusOr<stager::SessionDescription> described = client_->Describe();
    ASSERT_TRUE(described.ok()) << described.status();
    if (!described->sandboxed() && !on_host_) {
      GTEST_SKIP() << "no OS sandbox here: " << described->sandbox_problem();
    }
  }

  void TearDown() override {
    if (client_ != nullptr) client_->End().IgnoreError();
  }

  struct Watched {
    absl::StatusOr<CommandService::Ran> ran;
    std::string live;
    bool started = false;
  };

  // Runs `command` watched; with `cancel_on`, the cancel is set once the
  // live output shows that text.
  Watched Run(const std::string& command,
              std::optional<std::string> cancel_on) {
    Watched out;
    CancelFlag cancel;
    std::mutex mu;
    auto maybe_cancel = [&] {
      if (cancel_on && out.started &&
          out.live.find(*cancel_on) != std::string::npos) {
        cancel.Cancel();
      }
    };
    CommandWatch watch;
    watch.cancel = &cancel;
    watch.on_started = [&] {
      std::lock_guard<std::mutex> lock(mu);
      out.started = true;
      maybe_cancel();
    };
    watch.on_output = [&](int, absl::string_view data) {
      std::lock_guard<std::mutex> lock(mu);
      out.live.append(data.data(), data.size());
      maybe_cancel();
    };
    stager::RunCommand run;
    run.set_command(command);
    run.set_on_host(on_host_);
    run.set_timeout_seconds(120);
    out.ran = client_->RunWatched(run, watch);
    return out;
  }

  std::string root_, project_, mode_;
  bool on_host_ = false;
  std::unique_ptr<ipc::HelperProcess> process_;
  std::unique_ptr<CommandService> client_;
};

bool ProcessGone(pid_t pid) {
  for (int i = 0; i < 500; ++i) {
    std::string stat =
        ReadFileToString(absl::StrCat("/proc/", pid, "/stat")).value_or("");
    size_t paren = stat.rfind(')');
    if (paren == std::string::npos || paren + 2 >= stat.size() ||
        stat[paren + 2] == 'Z') {
      return true;
    }
    ::usleep(10000);
  }
  ::kill(pid, SIGKILL);
  return false;
}

TEST_P(StagerWatchTest, CancelStopsTheCommandAndWhatItStarted) {
  // The background sleep keeps the output open: the reply comes only once
  // it has ended too. On the host its pid is written down to be checked.
  const std::string pid_file = JoinPath(root_, "background.pid");
  std::string command =
      on_host_ ? absl::StrCat("sleep 60 & echo $! > ", pid_file,
                              "; echo started; wait")
               : "sleep 60 & echo started; wait";
  // Stopped once its output says it started (the on_host runner's files
  // are read as they grow).
  const absl::Time begin = absl::Now();
  Watched stopped = Run(command, std::string("started"));
  ASSERT_TRUE(stopped.ran.ok()) << stopped.ran.status();
  EXPECT_EQ(stopped.ran->result.kind(), stager::CommandResult::STOPPED)
      << stopped.ran->result.DebugString();
  EXPECT_LT(absl::Now() - begin, absl::Seconds(50));
  EXPECT_TRUE(stopped.started);
  EXPECT_EQ(stopped.live, "started\n");
  if (on_host_) {
    pid_t pid = std::atoi(ReadFileToString(pid_file).value_or("0").c_str());
    ASSERT_GT(pid, 1);
    EXPECT_TRUE(ProcessGone(pid)) << "the background sleep outlived the stop";
  }

  // Control: not cancelled, the command runs to its end and says so.
  Watched ran = Run("sleep 0.3 & echo started; wait; echo done", std::nullopt);
  ASSERT_TRUE(ran.ran.ok()) << ran.ran.status();
  EXPECT_EQ(ran.ran->result.kind(), stager::CommandResult::EXITED);
  EXPECT_EQ(ran.ran->result.stdout_data(), "started\ndone\n");
}

INSTANTIATE_TEST_SUITE_P(Modes, StagerWatchTest,
                         ::testing::Values("direct", "staged", "host"));

TEST(StagerWatchRefusalTest, AWatchThatIsNotASeqpacketSocketRunsNothing) {
  std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "refuseXXXXXX");
  std::string root = ::mkdtemp(templ.data());
  std::string project = JoinPath(root, "project");
  ASSERT_TRUE(MakeDirectories(project, 0700).ok());
  ASSERT_TRUE(MakeDirectories(JoinPath(root, "home/.garuda"), 0700).ok());
  ::setenv("HOME", JoinPath(root, "home").c_str(), 1);
  ipc::HelperOptions options;
  options.argv = {Program("garuda-stager"), "serve", "--channel-fd=3",
                  "--project", project, "--mode", "direct", "--quiet"};
  auto process = ipc::HelperProcess::Spawn(options);
  ASSERT_TRUE(process.ok()) << process.status();
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  UniqueFd pipe_read(fds[0]), pipe_write(fds[1]);
  const std::string marker = JoinPath(project, "ran");
  for (bool socket : {false, true}) {
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair),
              0);
    UniqueFd ours(pair[0]), theirs(pair[1]);
    stager::StagerRequest request;
    request.set_seq(socket ? 2 : 1);
    request.mutable_run()->set_command(absl::StrCat("touch ", marker));
    request.mutable_run()->set_watched(true);
    const int sent = socket ? theirs.get() : pipe_write.get();
    stager::StagerReply reply;
    ASSERT_TRUE((*process)->Call(request, &reply, nullptr, {sent}).ok());
    struct stat st;
    if (!socket) {
      EXPECT_TRUE(reply.has_error()) << reply.DebugString();
      EXPECT_NE(reply.error().message().find("SOCK_SEQPACKET"),
                std::string::npos);
      EXPECT_NE(::lstat(marker.c_str(), &st), 0) << "the command ran";
    } else if (reply.has_result() && reply.result().kind() !=
                                         stager::CommandResult::FAILED_TO_START) {
      // Control: with the right kind of socket it runs (where the sandbox
      // works).
      EXPECT_EQ(::lstat(marker.c_str(), &st), 0) << reply.DebugString();
    }
  }
}

}  // namespace
}  // namespace garuda
