#include "sandbox/sandbox.h"

#include <dirent.h>
#include <linux/magic.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/rules/sandbox_defaults.h"
#include "sandbox/cgroup.h"
#include "sandbox/private_walk.h"
#include "sandbox/stored_walk.h"

namespace garuda {
namespace {

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "sbXXXXXX");
    root_ = ::mkdtemp(templ.data());
    project_ = JoinPath(root_, "project");
    outside_ = JoinPath(root_, "outside");
    ASSERT_TRUE(MakeDirectories(project_, 0755).ok());
    ASSERT_TRUE(MakeDirectories(outside_, 0755).ok());
    policy_.set_project(project_);
    policy_.set_project_writable(true);
    (*policy_.mutable_environment())["PATH"] = "/usr/bin:/bin";
  }
  RunResult Run(const std::string& script) {
    RunOptions options;
    options.argv = {"/bin/sh", "-c", script};
    options.capture_output = true;
    auto result = RunInSandbox(policy_, options);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : RunResult();
  }
  bool Exists(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
  }
  std::string root_, project_, outside_;
  SandboxPolicy policy_;
};

TEST_F(SandboxTest, ExitCodeAndOutput) {
  RunResult result = Run("echo hello; echo oops >&2; exit 3");
  EXPECT_EQ(result.kind, RunResult::Kind::kExited) << result.Describe();
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.stdout_data, "hello\n");
  EXPECT_EQ(result.stderr_data, "oops\n");
}

TEST_F(SandboxTest, WritesTheProjectButNotOutside) {
  RunResult result =
      Run("echo in > " + project_ + "/f && echo out > " + outside_ + "/f");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_TRUE(Exists(project_ + "/f"));
  EXPECT_FALSE(Exists(outside_ + "/f"));
}

TEST_F(SandboxTest, ReadOnlyProject) {
  policy_.set_project_writable(false);
  RunResult result = Run("echo in > " + project_ + "/f");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_FALSE(Exists(project_ + "/f"));
  // Negative control: writable.
  policy_.set_project_writable(true);
  EXPECT_EQ(Run("echo in > " + project_ + "/f").exit_code, 0);
  EXPECT_TRUE(Exists(project_ + "/f"));
}

TEST_F(SandboxTest, WorkingDirectoryIsTheProject) {
  EXPECT_EQ(Run("pwd").stdout_data, project_ + "\n");
}

TEST_F(SandboxTest, EnvironmentComesFromThePolicy) {
  ::setenv("GARUDA_SECRET_FOR_TEST", "x", 1);
  EXPECT_EQ(Run("echo \"[$GARUDA_SECRET_FOR_TEST]\"").stdout_data, "[]\n");
  (*policy_.mutable_environment())["GARUDA_SECRET_FOR_TEST"] = "y";
  EXPECT_EQ(Run("echo \"[$GARUDA_SECRET_FOR_TEST]\"").stdout_data, "[y]\n");
}

TEST_F(SandboxTest, SignalAndFailureToStart) {
  RunResult killed = Run("kill -TERM $$");
  EXPECT_EQ(killed.kind, RunResult::Kind::kSignaled) << killed.Describe();
  EXPECT_EQ(killed.signal, SIGTERM);

  RunOptions options;
  options.argv = {"/no/such/program"};
  auto missing = RunInSandbox(policy_, options);
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->kind, RunResult::Kind::kFailedToStart);
  EXPECT_NE(missing->reason.find("/no/such/program"), std::string::npos);
}

TEST_F(SandboxTest, WallTimeEndsTheCommand) {
  policy_.mutable_limits()->set_wall_time_ms(200);
  RunResult result = Run("sleep 100");
  EXPECT_EQ(result.kind, RunResult::Kind::kTimedOut) << result.Describe();
  // Negative control: a command inside its time exits normally.
  EXPECT_EQ(Run("true").kind, RunResult::Kind::kExited);
}

TEST_F(SandboxTest, CaptureIsCapped) {
  RunOptions options;
  options.argv = {"/bin/sh", "-c", "head -c 100000 /dev/zero"};
  options.capture_output = true;
  options.capture_limit = 1000;
  auto result = RunInSandbox(policy_, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->stdout_data.size(), 1000u);
  EXPECT_TRUE(result->stdout_truncated);
  EXPECT_EQ(result->exit_code, 0);
}

TEST_F(SandboxTest, DeniedPathsHiddenAndCreatedWhenMissing) {
  ASSERT_TRUE(MakeDirectories(project_ + "/.git/hooks", 0755).ok());
  ASSERT_TRUE(
      WriteFileAtomically(project_ + "/.git/hooks/pre-commit", "secret", 0755)
          .ok());
  ASSERT_TRUE(WriteFileAtomically(project_ + "/key", "k", 0644).ok());
  policy_.add_denied_paths(".git/hooks");
  policy_.add_denied_paths(".garuda");
  policy_.add_denied_paths("key");
  EXPECT_NE(Run("cat .git/hooks/pre-commit").exit_code, 0);
  EXPECT_NE(Run("cat key").exit_code, 0);
  EXPECT_NE(Run("echo x > key").exit_code, 0);
  EXPECT_NE(Run("mkdir .garuda/x").exit_code, 0);
  EXPECT_TRUE(Exists(project_ + "/.garuda"));  // created empty
  EXPECT_FALSE(Exists(project_ + "/.garuda/x"));
  EXPECT_EQ(*ReadFileToString(project_ + "/key"), "k");
}

// With the walk of denyPrivateUnder kept between runs (garuda-stager
// serve), a secret added after the first run is still hidden from the next.
// Negative control: without denyPrivateUnder the command reads it (uid 0
// in the sandbox owns the test's files).
TEST_F(SandboxTest, ASecretAddedBetweenRunsIsHiddenWithTheWalkKept) {
  std::string etc = JoinPath(project_, "etc");
  ASSERT_TRUE(MakeDirectories(JoinPath(etc, "sub"), 0755).ok());
  ASSERT_TRUE(
      WriteFileAtomically(JoinPath(etc, "sub/public"), "open", 0644).ok());
  policy_.add_deny_private_under(etc);
  PrivateWalk kept;
  RunOptions options;
  options.capture_output = true;
  options.private_walk = &kept;
  options.argv = {"/bin/sh", "-c", "cat etc/sub/public etc/sub/secret"};
  auto first = RunInSandbox(policy_, options);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->stdout_data, "open");
  ASSERT_TRUE(
      WriteFileAtomically(JoinPath(etc, "sub/secret"), "secret", 0600).ok());
  auto second = RunInSandbox(policy_, options);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->stdout_data, "open") << "the secret was readable";
  EXPECT_EQ(kept.walks(), 2);
  // Nothing changed since: the walk is reused, and the secret stays hidden.
  auto third = RunInSandbox(policy_, options);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->stdout_data, "open");
  EXPECT_EQ(kept.walks(), 2);
  // The control.
  policy_.clear_deny_private_under();
  auto open = RunInSandbox(policy_, options);
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open->stdout_data, "opensecret");
}

// As garuda-stager run starts each command: the walk stored on disk between
// processes (sandbox/stored_walk.h). A secret added after the answer was
// stored is hidden from the next run; the control: without
// denyPrivateUnder the command reads it.
TEST_F(SandboxTest, ASecretAddedBetweenRunsIsHiddenWithTheStoredWalk) {
  if (::geteuid() != 0) GTEST_SKIP() << "storing needs root";
  std::string etc = JoinPath(project_, "etc");
  ASSERT_TRUE(MakeDirectories(JoinPath(etc, "sub"), 0755).ok());
  ASSERT_TRUE(
      WriteFileAtomically(JoinPath(etc, "sub/public"), "open", 0644).ok());
  policy_.add_deny_private_under(etc);
  StoredWalk stored(root_, "stored-walk");
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  // Taken as settled (stored_walk.h's rule is tested in private_walk_test).
  stored.SetWalkStartForTest((now.tv_sec + 10) * 1'000'000'000LL);
  RunOptions options;
  options.capture_output = true;
  options.stored_walk = &stored;
  options.argv = {"/bin/sh", "-c", "cat etc/sub/public etc/sub/secret"};
  auto first = RunInSandbox(policy_, options);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->stdout_data, "open");
  ASSERT_EQ(::access(stored.FileFor(etc).c_str(), F_OK), 0) << "not stored";
  // The secret's folder changes at a later clock tick than the walk saw.
  struct stat folder;
  ASSERT_EQ(::stat(JoinPath(etc, "sub").c_str(), &folder), 0);
  do {
    ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  } while (now.tv_sec < folder.st_ctim.tv_sec ||
           (now.tv_sec == folder.st_ctim.tv_sec &&
            now.tv_nsec <= folder.st_ctim.tv_nsec));
  ASSERT_TRUE(
      WriteFileAtomically(JoinPath(etc, "sub/secret"), "secret", 0600).ok());
  auto second = RunInSandbox(policy_, options);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->stdout_data, "open") << "the secret was readable";
  auto third = RunInSandbox(policy_, options);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->stdout_data, "open");
  policy_.clear_deny_private_under();
  auto open = RunInSandbox(policy_, options);
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open->stdout_data, "opensecret");
}

// What deny_private_under finds, beside the policy's named denied paths: a
// private path inside a named one is left to the named one's mount (a mount
// point there could not be made), a private folder around a named path
// covers it, and a private file alone is hidden.
TEST_F(SandboxTest, PrivatePathsAreHiddenBesideNamedOnes) {
  const std::string etc = JoinPath(project_, "etc");
  ASSERT_TRUE(MakeDirectories(JoinPath(etc, "ssl"), 0755).ok());
  ASSERT_TRUE(MakeDirectories(JoinPath(etc, "keys/named"), 0700).ok());
  ASSERT_TRUE(WriteFileAtomically(JoinPath(etc, "public"), "open", 0644).ok());
  ASSERT_TRUE(WriteFileAtomically(JoinPath(etc, "secret"), "s", 0600).ok());
  ASSERT_TRUE(
      WriteFileAtomically(JoinPath(etc, "ssl/private.key"), "k", 0600).ok());
  ASSERT_TRUE(
      WriteFileAtomically(JoinPath(etc, "keys/named/key"), "n", 0644).ok());
  const std::string script =
      "cat etc/public; cat etc/secret 2>/dev/null && echo LEAK-secret; "
      "cat etc/ssl/private.key 2>/dev/null && echo LEAK-ssl; "
      "cat etc/keys/named/key 2>/dev/null && echo LEAK-keys; true";
  policy_.add_denied_paths("etc/ssl");
  policy_.add_denied_paths("etc/keys/named");
  policy_.add_deny_private_under(etc);
  RunResult hidden = Run(script);
  EXPECT_EQ(hidden.kind, RunResult::Kind::kExited) << hidden.Describe();
  EXPECT_EQ(hidden.stdout_data, "open");
  // The control: without either list every one of them is read.
  policy_.clear_denied_paths();
  policy_.clear_deny_private_under();
  EXPECT_EQ(Run(script).stdout_data,
            "opensLEAK-secret\nkLEAK-ssl\nnLEAK-keys\n");
}

// A private path that cannot be hidden (a link on the way to it) refuses the
// run: nothing of the command runs, and the error names the link.
TEST_F(SandboxTest, APrivatePathThatCannotBeHiddenStopsTheRun) {
  const std::string real = JoinPath(root_, "real");
  ASSERT_TRUE(MakeDirectories(JoinPath(real, "etc"), 0755).ok());
  ASSERT_TRUE(
      WriteFileAtomically(JoinPath(real, "etc/secret"), "s", 0600).ok());
  const std::string via = JoinPath(root_, "via");
  ASSERT_EQ(::symlink(real.c_str(), via.c_str()), 0);
  RunOptions options;
  options.argv = {"/bin/sh", "-c", "touch ran"};
  policy_.add_deny_private_under(JoinPath(via, "etc"));
  auto refused = RunInSandbox(policy_, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "symbolic link"))
      << refused.status();
  EXPECT_FALSE(Exists(JoinPath(project_, "ran")));
  // The control: the same folder by its own path runs.
  policy_.clear_deny_private_under();
  policy_.add_deny_private_under(JoinPath(real, "etc"));
  auto ran = RunInSandbox(policy_, options);
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_TRUE(Exists(JoinPath(project_, "ran")));
}

TEST_F(SandboxTest, WorktreeWithAGitFileRuns) {
  ASSERT_TRUE(
      WriteFileAtomically(project_ + "/.git", "gitdir: /elsewhere\n", 0644)
          .ok());
  policy_.add_denied_paths(".git/hooks");
  EXPECT_EQ(Run("cat .git").stdout_data, "gitdir: /elsewhere\n");
}

TEST_F(SandboxTest, EntryRunsConfined) {
  RunOptions options;
  options.entry = [this] {
    return ::access(outside_.c_str(), F_OK) == 0 ? 1 : 0;
  };
  auto result = RunInSandbox(policy_, options);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->kind, RunResult::Kind::kExited) << result->Describe();
  EXPECT_EQ(result->exit_code, 0);
}

// Runs `entry` in the sandbox; its exit code says what it saw.
int RunEntry(const SandboxPolicy& policy, std::function<int()> entry) {
  RunOptions options;
  options.entry = std::move(entry);
  auto result = RunInSandbox(policy, options);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return -1;
  EXPECT_EQ(result->kind, RunResult::Kind::kExited) << result->Describe();
  return result->exit_code;
}

TEST_F(SandboxTest, SeccompRefusesPtraceAndSocketsWithNetworkOff) {
  auto ptrace_errno = [] {
    return ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) == 0 ? 0 : errno;
  };
  auto inet_errno = [] {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    return fd >= 0 ? 0 : errno;
  };
  auto unix_errno = [] {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    return fd >= 0 ? 0 : errno;
  };
  EXPECT_EQ(RunEntry(policy_, ptrace_errno), EPERM);
  EXPECT_EQ(RunEntry(policy_, inet_errno), EPERM);
  EXPECT_EQ(RunEntry(policy_, unix_errno), 0);  // local sockets stay
  // Negative control: with the network on, an IP socket can be made.
  policy_.set_network(true);
  EXPECT_EQ(RunEntry(policy_, inet_errno), 0);
}

TEST_F(SandboxTest, LandlockFailsClosedBelowTheMinimumAbi) {
  policy_.set_min_landlock_abi(1000);
  RunResult result = Run("true");
  EXPECT_EQ(result.kind, RunResult::Kind::kFailedToStart);
  EXPECT_TRUE(result.sandbox_failed);
  EXPECT_NE(result.reason.find("Landlock"), std::string::npos) << result.reason;
  // Negative control: the kernel's own ABI is enough.
  policy_.set_min_landlock_abi(1);
  EXPECT_TRUE(Run("true").ok());
}

// /proc is mounted read-write, so only Landlock refuses this write: it shows
// that Landlock is on, beside the read-only mounts.
TEST_F(SandboxTest, LandlockRefusesWritesOutsideTheWritablePaths) {
  RunResult result = Run("echo renamed > /proc/self/comm");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.stderr_data.find("Permission denied"), std::string::npos)
      << result.stderr_data;
  // Negative control: the same write on the host works.
  RunOptions options;
  options.argv = {"/bin/sh", "-c", "echo renamed > /proc/self/comm"};
  options.capture_output = true;
  auto host = RunOnHost(options, project_);
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->exit_code, 0) << host->stderr_data;
}

// A host command that runs past its wall time ends with what it started in
// the background. The control: a command that ends in time leaves its
// background process running (only a timeout ends the group), which shows
// the test would see a survivor.
TEST_F(SandboxTest, HostTimeoutEndsTheBackgroundProcessesToo) {
  auto background_survives = [&](const std::string& tail, bool expect_dead) {
    std::string pid_file = project_ + "/background.pid";
    ::unlink(pid_file.c_str());
    RunOptions options;
    options.argv = {"/bin/sh", "-c",
                    "sleep 60 </dev/null >/dev/null 2>&1 & echo $! > " +
                        pid_file + "; " + tail};
    options.wall_time_ms = 500;
    auto host = RunOnHost(options, project_);
    EXPECT_TRUE(host.ok()) << host.status();
    std::string text = ReadFileToString(pid_file).value_or("");
    pid_t pid = std::atoi(text.c_str());
    EXPECT_GT(pid, 1) << text;
    if (pid <= 1) return true;
    // SIGKILL is delivered at once, but the process leaves the table only
    // when reaped: alive means neither gone nor a zombie. A death is waited
    // for (up to 5 s); a survivor is looked at once.
    bool alive = true;
    for (int i = 0; i < (expect_dead ? 500 : 1) && alive; ++i) {
      std::string stat =
          ReadFileToString(absl::StrCat("/proc/", pid, "/stat")).value_or("");
      size_t paren = stat.rfind(')');
      alive = paren != std::string::npos && paren + 2 < stat.size() &&
              stat[paren + 2] != 'Z';
      if (alive && expect_dead) ::usleep(10000);
    }
    if (alive) ::kill(pid, SIGKILL);
    return alive;
  };
  EXPECT_FALSE(background_survives("sleep 30", true));
  EXPECT_TRUE(background_survives("true", false));
}

// A stop from the caller's side (RunOptions::cancel_fd): the cancel pipe is
// written once the command says it started (from on_output, so no timing
// is guessed). The background sleep keeps the output pipe open: the run
// returns only once it has ended too.
struct CancelledRun {
  absl::StatusOr<RunResult> result;
  std::string live;  // what on_output saw
};
CancelledRun RunAndCancel(const std::function<absl::StatusOr<RunResult>(
                              const RunOptions&)>& run,
                          const std::string& script, bool cancel) {
  int fds[2];
  EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  UniqueFd cancel_read(fds[0]), cancel_write(fds[1]);
  CancelledRun out;
  RunOptions options;
  options.argv = {"/bin/sh", "-c", script};
  options.capture_output = true;
  options.cancel_fd = cancel_read.get();
  options.on_output = [&](int stream, absl::string_view data) {
    if (stream == 1) out.live.append(data.data(), data.size());
    if (cancel && out.live.find("started") != std::string::npos &&
        cancel_write) {
      (void)!::write(cancel_write.get(), "c", 1);
      cancel_write.Reset();
    }
  };
  out.result = run(options);
  return out;
}

TEST_F(SandboxTest, CancelStopsTheCommandAndEverythingItStarted) {
  auto in_sandbox = [&](const RunOptions& options) {
    return RunInSandbox(policy_, options);
  };
  CancelledRun stopped =
      RunAndCancel(in_sandbox, "sleep 60 & echo started; wait", true);
  ASSERT_TRUE(stopped.result.ok()) << stopped.result.status();
  EXPECT_EQ(stopped.result->kind, RunResult::Kind::kStopped)
      << stopped.result->Describe();
  EXPECT_EQ(stopped.result->stdout_data, "started\n");
  EXPECT_EQ(stopped.live, "started\n");
  EXPECT_EQ(stopped.result->ShellExitCode(), 130);
  // Negative control: the same run, never cancelled, goes to its end.
  CancelledRun ran =
      RunAndCancel(in_sandbox, "sleep 0.2 & echo started; wait", false);
  ASSERT_TRUE(ran.result.ok());
  EXPECT_EQ(ran.result->kind, RunResult::Kind::kExited)
      << ran.result->Describe();
}

TEST_F(SandboxTest, CancelStopsAHostCommandAndItsBackground) {
  std::string pid_file = project_ + "/background.pid";
  auto on_host = [&](const RunOptions& options) {
    return RunOnHost(options, project_);
  };
  CancelledRun stopped = RunAndCancel(
      on_host, "sleep 60 & echo $! > " + pid_file + "; echo started; wait",
      true);
  ASSERT_TRUE(stopped.result.ok()) << stopped.result.status();
  EXPECT_EQ(stopped.result->kind, RunResult::Kind::kStopped)
      << stopped.result->Describe();
  // The background sleep held the output pipe: that the run returned says
  // it ended; its pid is gone or a zombie of init's.
  pid_t pid = std::atoi(ReadFileToString(pid_file).value_or("0").c_str());
  ASSERT_GT(pid, 1);
  bool alive = true;
  for (int i = 0; i < 500 && alive; ++i) {
    std::string stat =
        ReadFileToString(absl::StrCat("/proc/", pid, "/stat")).value_or("");
    size_t paren = stat.rfind(')');
    alive = paren != std::string::npos && paren + 2 < stat.size() &&
            stat[paren + 2] != 'Z';
    if (alive) ::usleep(10000);
  }
  if (alive) ::kill(pid, SIGKILL);
  EXPECT_FALSE(alive) << "the background process outlived the stop";
  // Negative control: not cancelled, it exits by itself.
  CancelledRun ran = RunAndCancel(on_host, "echo started", false);
  ASSERT_TRUE(ran.result.ok());
  EXPECT_EQ(ran.result->kind, RunResult::Kind::kExited);
}

// A host run's tick (RunOptions::on_tick): called while the command runs,
// and the wall time still ends it. The control: no tick_ms, no calls.
TEST_F(SandboxTest, AHostRunTicksAndKeepsItsWallTime) {
  int ticks = 0;
  RunOptions options;
  options.argv = {"/bin/sh", "-c", "sleep 0.4"};
  options.tick_ms = 20;
  options.on_tick = [&] { ++ticks; };
  auto ran = RunOnHost(options, project_);
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_EQ(ran->kind, RunResult::Kind::kExited) << ran->Describe();
  EXPECT_GE(ticks, 3);
  options.argv = {"/bin/sh", "-c", "sleep 30"};
  options.wall_time_ms = 200;
  ran = RunOnHost(options, project_);
  ASSERT_TRUE(ran.ok());
  EXPECT_EQ(ran->kind, RunResult::Kind::kTimedOut) << ran->Describe();
  ticks = 0;
  options.argv = {"/bin/sh", "-c", "sleep 0.2"};
  options.wall_time_ms = 0;
  options.tick_ms = 0;
  ASSERT_TRUE(RunOnHost(options, project_).ok());
  EXPECT_EQ(ticks, 0);
}

int64_t ClockNs(clockid_t clock) {
  struct timespec now;
  ::clock_gettime(clock, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// start_after_coarse_ns: the command's process starts only once the coarse
// clock has passed the line (a staged command's start line).
TEST_F(SandboxTest, TheCommandStartsOnlyPastTheClockLine) {
  RunOptions options;
  options.capture_output = true;
  int64_t line = ClockNs(CLOCK_REALTIME) + 200000000;  // 200 ms ahead
  options.entry = [line] {
    return ClockNs(CLOCK_REALTIME_COARSE) > line ? 0 : 1;
  };
  options.start_after_coarse_ns = line;
  auto result = RunInSandbox(policy_, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok()) << result->Describe();
  // Negative control: without it the command starts long before a line
  // 5 s ahead.
  line = ClockNs(CLOCK_REALTIME) + 5000000000;
  options.entry = [line] {
    return ClockNs(CLOCK_REALTIME_COARSE) > line ? 0 : 1;
  };
  options.start_after_coarse_ns = 0;
  result = RunInSandbox(policy_, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 1) << result->Describe();
}

TEST_F(SandboxTest, NoCapabilitiesAndNoNewPrivileges) {
  RunResult result =
      Run("grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status");
  EXPECT_EQ(result.stdout_data,
            "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n"
            "NoNewPrivs:\t1\n")
      << result.stdout_data;
}

TEST_F(SandboxTest, FileSizeLimit) {
  policy_.mutable_limits()->set_file_size_bytes(4096);
  RunResult result = Run("head -c 100000 /dev/zero > big");
  EXPECT_EQ(result.kind, RunResult::Kind::kExited);  // sh reports SIGXFSZ
  EXPECT_NE(result.exit_code, 0);
  struct stat st;
  ASSERT_EQ(::stat((project_ + "/big").c_str(), &st), 0);
  EXPECT_LE(st.st_size, 4096);
  // Negative control.
  policy_.mutable_limits()->set_file_size_bytes(0);
  EXPECT_EQ(Run("head -c 100000 /dev/zero > big").exit_code, 0);
}

TEST_F(SandboxTest, KeepProcessesWaitsForTheBackground) {
  // Without keep: the run returns at once, the background is gone.
  EXPECT_EQ(Run("(sleep 1000; echo late) & echo now").stdout_data, "now\n");
  // With keep: the run lasts until the background ends.
  policy_.set_keep_processes(true);
  EXPECT_EQ(Run("(sleep 0.2; echo late) & echo now").stdout_data,
            "now\nlate\n");
}

// return_before_teardown: the run returns once PID 1 has reported.
// The command's exit code, its writes, a failure to start, and its
// background processes: gone when the run returns, which a lock that only
// they held shows without waiting. The control: the same command on the
// host leaves its background process holding the lock.
TEST_F(SandboxTest, ReturnBeforeTeardown) {
  RunOptions options;
  options.return_before_teardown = true;
  options.argv = {"/bin/sh", "-c", "echo in > " + project_ + "/f; exit 3"};
  auto result = RunInSandbox(policy_, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->kind, RunResult::Kind::kExited) << result->Describe();
  EXPECT_EQ(result->exit_code, 3);
  EXPECT_TRUE(Exists(project_ + "/f"));

  options.argv = {"/no/such/program"};
  result = RunInSandbox(policy_, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->kind, RunResult::Kind::kFailedToStart);
  EXPECT_FALSE(result->sandbox_failed) << result->Describe();

  // A background process of the command holds a lock (flock, taken by the
  // shell on its descriptor 9, which the background process inherits):
  // free again once the run has returned, and PID 1 never held it.
  std::string lock = project_ + "/lock";
  std::string pid_file = project_ + "/background.pid";
  auto background_holds_lock = [&](bool in_sandbox) {
    RunOptions run;
    run.return_before_teardown = true;
    run.argv = {"/bin/sh", "-c",
                "exec 9>" + lock + " && flock 9 && { sleep 60 & echo $! > " +
                    pid_file + "; }"};
    bool ok = in_sandbox ? RunInSandbox(policy_, run).ok()
                         : RunOnHost(run, project_).ok();
    EXPECT_TRUE(ok);
    int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0);
    bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
    ::close(fd);
    if (held && !in_sandbox) {
      auto pid = ReadFileToString(pid_file);
      if (pid.ok()) ::kill(std::atoi(pid->c_str()), SIGKILL);
    }
    return held;
  };
  EXPECT_FALSE(background_holds_lock(true));
  EXPECT_TRUE(background_holds_lock(false));

  // With a wall time to keep too.
  policy_.mutable_limits()->set_wall_time_ms(60000);
  EXPECT_FALSE(background_holds_lock(true));
  options.argv = {"/bin/sh", "-c", "exit 5"};
  result = RunInSandbox(policy_, options);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->exit_code, 5) << result->Describe();
}

TEST_F(SandboxTest, WritableBindOverAPath) {
  std::string staging = JoinPath(root_, "staging");
  ASSERT_TRUE(MakeDirectories(staging, 0755).ok());
  BindMount* bind = policy_.add_binds();
  bind->set_source(staging);
  bind->set_target(project_);
  bind->set_writable(true);
  EXPECT_EQ(Run("echo x > " + project_ + "/через").exit_code, 0);
  EXPECT_TRUE(Exists(staging + "/через"));
  EXPECT_FALSE(Exists(project_ + "/через"));
}

// Touches `mib` MiB, one at a time; 3 when an allocation fails.
int Allocate(int mib) {
  for (int i = 0; i < mib; ++i) {
    void* block = ::malloc(1 << 20);
    if (block == nullptr) return 3;
    ::memset(block, 1, 1 << 20);
  }
  return 0;
}

// Starts up to `tries` children that wait, and returns how many started.
int ForkUpTo(int tries) {
  int fds[2];
  if (::pipe(fds) != 0) return 255;
  int started = 0;
  for (int i = 0; i < tries; ++i) {
    pid_t pid = ::fork();
    if (pid < 0) break;
    if (pid == 0) {
      char byte;
      ::close(fds[1]);
      (void)!::read(fds[0], &byte, 1);
      ::_exit(0);
    }
    ++started;
  }
  ::close(fds[1]);
  while (::wait(nullptr) > 0) {
  }
  return started;
}

// Our cgroups below `parent` (none must be left after a run).
int CgroupsLeft(const std::string& parent) {
  std::string prefix = "garuda-" + std::to_string(::getpid()) + "-";
  int left = 0;
  DIR* dir = ::opendir(parent.c_str());
  if (dir == nullptr) return -1;
  while (struct dirent* entry = ::readdir(dir)) {
    if (std::string(entry->d_name).rfind(prefix, 0) == 0) ++left;
  }
  ::closedir(dir);
  return left;
}

class LimitsTest : public SandboxTest {
 protected:
  RunResult RunEntry(std::function<int()> entry, bool use_cgroups = true) {
    RunOptions options;
    options.entry = std::move(entry);
    options.capture_output = true;
    options.use_cgroups = use_cgroups;
    auto result = RunInSandbox(policy_, options);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : RunResult();
  }
};

TEST_F(LimitsTest, OverTheMemoryLimitIsOutOfMemory) {
  CgroupPlace place = FindCgroupPlace(CgroupController::kMemory);
  if (!place.available) GTEST_SKIP() << "no memory cgroup: " << place.reason;
  policy_.mutable_limits()->set_memory_bytes(64 << 20);
  RunResult result = RunEntry([] { return Allocate(512); });
  EXPECT_EQ(result.kind, RunResult::Kind::kOutOfMemory) << result.Describe();
  EXPECT_GE(result.oom_kills, 1u);
  EXPECT_EQ(result.ShellExitCode(), 137);
  EXPECT_NE(result.Describe().find("out of memory"), std::string::npos);
  EXPECT_EQ(result.limits_note, "");
  EXPECT_EQ(CgroupsLeft(place.parent), 0);
  // Under the limit it completes.
  EXPECT_TRUE(RunEntry([] { return Allocate(16); }).ok());
  // Negative control: without the limit the same command completes.
  policy_.mutable_limits()->set_memory_bytes(0);
  result = RunEntry([] { return Allocate(512); });
  EXPECT_TRUE(result.ok()) << result.Describe();
  EXPECT_EQ(result.oom_kills, 0u);
}

TEST_F(LimitsTest, AProcessOfTheCommandKilledForMemoryIsNamed) {
  CgroupPlace place = FindCgroupPlace(CgroupController::kMemory);
  if (!place.available) GTEST_SKIP() << "no memory cgroup: " << place.reason;
  // tail keeps its whole last line: 200 MB of zeros without a newline. The
  // pipeline's status is tail's.
  std::string script = "head -c 200000000 /dev/zero | tail -n 1 >/dev/null";
  policy_.mutable_limits()->set_memory_bytes(64 << 20);
  RunResult result = Run(script);
  EXPECT_EQ(result.kind, RunResult::Kind::kExited) << result.Describe();
  EXPECT_EQ(result.exit_code, 128 + SIGKILL);
  EXPECT_GE(result.oom_kills, 1u);
  EXPECT_NE(result.Describe().find("the memory limit ended"), std::string::npos)
      << result.Describe();
  // A command killed for memory itself: out of memory.
  result = Run("exec tail -n 1 /dev/zero");
  EXPECT_EQ(result.kind, RunResult::Kind::kOutOfMemory) << result.Describe();
  // Negative control: without the limit the pipeline completes.
  policy_.mutable_limits()->set_memory_bytes(0);
  result = Run(script);
  EXPECT_TRUE(result.ok()) << result.Describe();
  EXPECT_EQ(result.oom_kills, 0u);
}

TEST_F(LimitsTest, WithoutACgroupTheMemoryLimitIsAnRlimitAndSaysSo) {
  policy_.mutable_limits()->set_memory_bytes(64 << 20);
  RunResult result = RunEntry([] { return Allocate(512); }, false);
  // The allocation failed and the command said so: its own exit, never a
  // guessed "out of memory".
  EXPECT_EQ(result.kind, RunResult::Kind::kExited) << result.Describe();
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.oom_kills, 0u);
  EXPECT_NE(result.limits_note.find("address-space rlimit"), std::string::npos)
      << result.limits_note;
  EXPECT_NE(result.Describe().find("address-space rlimit"), std::string::npos);
}

TEST_F(LimitsTest, TheProcessLimitBoundsAForkBomb) {
  CgroupPlace place = FindCgroupPlace(CgroupController::kPids);
  if (!place.available) GTEST_SKIP() << "no pids cgroup: " << place.reason;
  policy_.mutable_limits()->set_processes(10);
  RunResult result = RunEntry([] { return ForkUpTo(100); });
  // The command and 9 more.
  EXPECT_EQ(result.kind, RunResult::Kind::kExited) << result.Describe();
  EXPECT_EQ(result.exit_code, 9);
  EXPECT_EQ(result.limits_note, "");
  EXPECT_EQ(CgroupsLeft(place.parent), 0);
  // Negative control: a higher limit lets more start.
  policy_.mutable_limits()->set_processes(40);
  EXPECT_EQ(RunEntry([] { return ForkUpTo(100); }).exit_code, 39);
}

// PID 1 is born in the command's cgroups (the supervisor's thread steps in
// for the clone, cgroup v1) and the supervisor's thread is back where it
// was once the run has returned.
TEST_F(LimitsTest, TheCommandIsInItsCgroupAndTheSupervisorIsNot) {
  CgroupPlace place = FindCgroupPlace(CgroupController::kPids);
  if (!place.available) GTEST_SKIP() << "no pids cgroup: " << place.reason;
  auto before = ReadFileToString("/proc/thread-self/cgroup");
  ASSERT_TRUE(before.ok());
  policy_.mutable_limits()->set_processes(10);
  RunResult result = Run("cat /proc/self/cgroup; cat /proc/1/cgroup");
  ASSERT_TRUE(result.ok()) << result.Describe();
  // The command and PID 1 (both lines) in a garuda- cgroup of pids.
  size_t first = result.stdout_data.find(":pids:");
  if (place.version == 2) first = result.stdout_data.find("0::");
  ASSERT_NE(first, std::string::npos) << result.stdout_data;
  size_t line_end = result.stdout_data.find('\n', first);
  EXPECT_NE(result.stdout_data.substr(first, line_end - first).find("/garuda-"),
            std::string::npos)
      << result.stdout_data;
  int inside = 0;
  for (size_t at = 0;
       (at = result.stdout_data.find("/garuda-", at)) != std::string::npos;
       ++at) {
    ++inside;
  }
  EXPECT_GE(inside, 2) << result.stdout_data;
  EXPECT_EQ(ReadFileToString("/proc/thread-self/cgroup").value_or(""), *before);
  EXPECT_EQ(CgroupsLeft(place.parent), 0);
  // Negative control: with cgroups off neither is in one.
  RunOptions options;
  options.argv = {"/bin/sh", "-c", "cat /proc/self/cgroup /proc/1/cgroup"};
  options.capture_output = true;
  options.use_cgroups = false;
  auto off = RunInSandbox(policy_, options);
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->stdout_data.find("/garuda-"), std::string::npos)
      << off->stdout_data;
}

// PID 1 leaves its cgroups by itself once the command's processes are
// reaped (CommandCgroups::WaysBack), so that a run returning at the
// status (return_before_teardown) removes them without waiting for PID 1's
// exit: none is left when the run returns, the command was inside.
TEST_F(LimitsTest, ARunReturningAtTheStatusLeavesNoCgroup) {
  CgroupPlace place = FindCgroupPlace(CgroupController::kPids);
  if (!place.available) GTEST_SKIP() << "no pids cgroup: " << place.reason;
  policy_.mutable_limits()->set_processes(10);
  RunOptions options;
  options.argv = {"/bin/sh", "-c", "cat /proc/self/cgroup; sleep 60 &"};
  options.capture_output = true;
  options.return_before_teardown = true;
  for (int i = 0; i < 5; ++i) {
    auto result = RunInSandbox(policy_, options);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_TRUE(result->ok()) << result->Describe();
    EXPECT_NE(result->stdout_data.find("/garuda-"), std::string::npos)
        << result->stdout_data;
    EXPECT_EQ(CgroupsLeft(place.parent), 0);
  }
}

// The way out of the cgroups is PID 1's alone: the command's process closes
// it before anything of the command runs. An entry (no execve, so no
// close-on-exec) that writes "0" to every descriptor it could have been
// left on a cgroup file system stays inside its pids cgroup. Without that close it would leave (a
// write of "0" to a v1 `tasks` file moves the writer).
TEST_F(LimitsTest, TheCommandCannotTakePid1sWayOut) {
  CgroupPlace place = FindCgroupPlace(CgroupController::kPids);
  if (!place.available) GTEST_SKIP() << "no pids cgroup: " << place.reason;
  if (place.version != 1) GTEST_SKIP() << "PID 1 leaves by itself on v1 only";
  policy_.mutable_limits()->set_processes(10);
  RunResult result = RunEntry([] {
    // Any descriptor on a cgroup file system (the others are PID 1's pipes
    // to the supervisor, which a write would garble).
    for (int fd = 3; fd < 1024; ++fd) {
      struct statfs fs;
      if (::fstatfs(fd, &fs) == 0 && fs.f_type == CGROUP_SUPER_MAGIC) {
        (void)!::write(fd, "0", 1);
      }
    }
    auto cgroups = ReadFileToString("/proc/self/cgroup");
    if (!cgroups.ok()) return 2;
    size_t pids = cgroups->find(":pids:");
    if (pids == std::string::npos) return 3;
    size_t end = cgroups->find('\n', pids);
    return cgroups->substr(pids, end - pids).find("/garuda-") !=
                   std::string::npos
               ? 0
               : 1;
  });
  EXPECT_EQ(result.kind, RunResult::Kind::kExited) << result.Describe();
  EXPECT_EQ(result.exit_code, 0) << "the command left its pids cgroup";
  EXPECT_EQ(CgroupsLeft(place.parent), 0);
}

TEST_F(LimitsTest, AsRootRlimitNprocDoesNotBind) {
  if (::getuid() != 0) GTEST_SKIP() << "shows what root escapes";
  policy_.mutable_limits()->set_processes(10);
  RunResult result = RunEntry([] { return ForkUpTo(100); }, false);
  EXPECT_EQ(result.exit_code, 100) << result.Describe();
  EXPECT_NE(result.limits_note.find("RLIMIT_NPROC"), std::string::npos)
      << result.limits_note;
}

// The place of a command's cgroup from fake /proc texts over folders made
// in the test's own tmp: cgroup v1, v2, and each reason for none.
TEST(CgroupTest, FindsThePlaceInV1AndV2) {
  std::string root = JoinPath(std::getenv("TEST_TMPDIR"), "fake-cgroup");
  std::string v1 = JoinPath(root, "memory");
  std::string v2 = JoinPath(root, "unified");
  ASSERT_TRUE(MakeDirectories(JoinPath(v1, "job/7"), 0755).ok());
  ASSERT_TRUE(MakeDirectories(JoinPath(v2, "user.slice/garuda"), 0755).ok());
  ASSERT_TRUE(
      WriteFileAtomically(JoinPath(v2, "user.slice/garuda/cgroup.controllers"),
                          "cpu io memory pids\n", 0644)
          .ok());
  std::string v1_mount =
      "34 30 0:31 / " + v1 + " rw,relatime - cgroup cgroup rw,memory\n";
  std::string v2_mount =
      "40 30 0:37 / " + v2 + " rw,relatime shared:9 - cgroup2 cgroup2 rw\n";
  std::string proc = "4:memory:/job/7\n0::/user.slice/garuda\n";

  // Hybrid: memory is bound to v1, pids is in neither v1 mount: v2.
  CgroupPlace memory =
      FindCgroupPlaceIn(CgroupController::kMemory, v1_mount + v2_mount, proc);
  EXPECT_TRUE(memory.available) << memory.reason;
  EXPECT_EQ(memory.version, 1);
  EXPECT_EQ(memory.parent, JoinPath(v1, "job/7"));
  CgroupPlace pids =
      FindCgroupPlaceIn(CgroupController::kPids, v1_mount + v2_mount, proc);
  EXPECT_TRUE(pids.available) << pids.reason;
  EXPECT_EQ(pids.version, 2);
  EXPECT_EQ(pids.parent, JoinPath(v2, "user.slice/garuda"));

  // v2 whose folder does not offer the controller.
  ASSERT_TRUE(
      WriteFileAtomically(JoinPath(v2, "user.slice/garuda/cgroup.controllers"),
                          "cpu io\n", 0644)
          .ok());
  CgroupPlace none = FindCgroupPlaceIn(CgroupController::kMemory, v2_mount,
                                       "0::/user.slice/garuda\n");
  EXPECT_FALSE(none.available);
  EXPECT_NE(none.reason.find("not available"), std::string::npos)
      << none.reason;
  EXPECT_NE(none.fix.find("Delegate=yes"), std::string::npos) << none.fix;

  // A read-only mount (a container's).
  std::string read_only =
      "34 30 0:31 / " + v1 + " ro,relatime - cgroup cgroup ro,memory\n";
  none = FindCgroupPlaceIn(CgroupController::kMemory, read_only, proc);
  EXPECT_FALSE(none.available);
  EXPECT_NE(none.reason.find("read-only"), std::string::npos) << none.reason;

  // No hierarchy at all; our cgroup not under the mount.
  none = FindCgroupPlaceIn(CgroupController::kMemory, "", proc);
  EXPECT_FALSE(none.available);
  EXPECT_NE(none.reason.find("no cgroup hierarchy"), std::string::npos);
  none = FindCgroupPlaceIn(CgroupController::kMemory, v1_mount,
                           "4:memory:/elsewhere\n");
  EXPECT_FALSE(none.available);
  EXPECT_NE(none.reason.find("not visible"), std::string::npos) << none.reason;
}

// EnterThread: a process forked by the thread inside is born in the
// cgroup; after LeaveThread the thread is back and the cgroup can go.
TEST(CgroupTest, AThreadStepsInForAFork) {
  CgroupPlace place = FindCgroupPlace(CgroupController::kPids);
  if (!place.available) GTEST_SKIP() << "no pids cgroup: " << place.reason;
  if (place.version != 1) GTEST_SKIP() << "cgroup v2: moved after the fork";
  auto before = ReadFileToString("/proc/thread-self/cgroup");
  ASSERT_TRUE(before.ok());
  std::string path;
  {
    CommandCgroups cgroups = CommandCgroups::Create(0, 5, true);
    ASSERT_TRUE(cgroups.pids()) << cgroups.Note();
    path = cgroups.Paths()[0];
    std::string name = path.substr(path.rfind('/'));
    absl::StatusOr<bool> entered = cgroups.EnterThread();
    ASSERT_TRUE(entered.ok()) << entered.status();
    ASSERT_TRUE(*entered);
    pid_t pid = ::fork();
    if (pid == 0) {
      auto own = ReadFileToString("/proc/self/cgroup");
      ::_exit(own.ok() && own->find(name) != std::string::npos ? 0 : 3);
    }
    ASSERT_TRUE(cgroups.LeaveThread().ok());
    EXPECT_EQ(ReadFileToString("/proc/thread-self/cgroup").value_or(""),
              *before);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    // Negative control: forked after leaving, a child is not inside.
    pid = ::fork();
    if (pid == 0) {
      auto own = ReadFileToString("/proc/self/cgroup");
      ::_exit(own.ok() && own->find(name) != std::string::npos ? 0 : 3);
    }
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_EQ(WEXITSTATUS(status), 3);
  }
  EXPECT_FALSE(::access(path.c_str(), F_OK) == 0) << path << " is left";
}

TEST(CgroupTest, LeftoversOfDeadSupervisorsAreRemoved) {
  std::string parent = JoinPath(std::getenv("TEST_TMPDIR"), "cgroups");
  ASSERT_TRUE(MakeDirectories(parent, 0755).ok());
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
  std::string gone = JoinPath(parent, "garuda-" + std::to_string(dead) + "-3");
  std::string ours =
      JoinPath(parent, "garuda-" + std::to_string(::getpid()) + "-0");
  std::string live = JoinPath(parent, "garuda-1-0");  // init lives
  std::string other = JoinPath(parent, "someone-" + std::to_string(dead));
  for (const std::string& dir : {gone, ours, live, other}) {
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0) << dir;
  }
  RemoveLeftoverCgroups(parent);
  struct stat st;
  EXPECT_NE(::stat(gone.c_str(), &st), 0);
  EXPECT_EQ(::stat(ours.c_str(), &st), 0);
  EXPECT_EQ(::stat(live.c_str(), &st), 0);
  EXPECT_EQ(::stat(other.c_str(), &st), 0);
}

TEST(RunResultTest, Describe) {
  EXPECT_EQ(RunResult::Signaled(SIGSYS).kind, RunResult::Kind::kSeccompKilled);
  EXPECT_EQ(RunResult::Signaled(SIGSYS).ShellExitCode(), 128 + SIGSYS);
  EXPECT_EQ(RunResult::Exited(3).Describe(), "exited with code 3");
  EXPECT_EQ(RunResult::FailedToStart("x").ShellExitCode(), 125);
  RunResult killed = RunResult::Exited(137);
  killed.oom_kills = 2;
  killed.limits_note = "a note";
  EXPECT_EQ(killed.Describe(),
            "exited with code 137; the memory limit ended 2 processes in the "
            "sandbox [a note]");
  RunResult fine = RunResult::Exited(0);
  fine.limits_note = "a note";
  EXPECT_EQ(fine.Describe(), "exited with code 0");
}

TEST(DefaultsTest, Parse) {
  EXPECT_GT(DefaultSandboxSettings().read_only_paths_size(), 0);
  EXPECT_GT(DefaultSandboxSettings().project_denied_paths_size(), 0);
}

}  // namespace
}  // namespace garuda
