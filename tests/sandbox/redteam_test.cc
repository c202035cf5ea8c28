// The red-team corpus of issue 13: each class of weakness that a red-team
// pass got through `garuda-stager run`, with its variants, in direct and
// staged mode, against the real program. Every attack has its control:
// the same attack where the fix does not apply (on the host, or with the
// setting that allows it), which shows that the attack is real and that the
// test can see it work.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "sandbox/cgroup.h"
#include "sandbox/sandbox.h"
#include "tests/sandbox/corpus_places.h"

namespace garuda {
namespace {

enum class Mode { kDirect, kStaged };

const char* Name(Mode mode) {
  return mode == Mode::kDirect ? "direct" : "staged";
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// Waits for `pid` until `deadline_ms`; false (and the child killed) at the
// deadline, so that a hang fails the test with a message instead of
// stalling it.
bool WaitWithDeadline(pid_t pid, int deadline_ms, int* status) {
  UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  struct pollfd ready = {pidfd.get(), POLLIN, 0};
  bool ended = ::poll(&ready, 1, deadline_ms) == 1;
  if (!ended) ::kill(pid, SIGKILL);
  ::waitpid(pid, status, 0);
  return ended;
}

class RedTeamTest : public CorpusTest {
 protected:
  void SetUp() override {
    SetUpPlaces("rt");
    if (HasFatalFailure()) return;
    RunResult init = Host({"git", "init", "-q"});
    ASSERT_EQ(init.exit_code, 0) << init.stderr_data;
  }

  std::vector<std::string> StagerArgv(Mode mode,
                                      std::vector<std::string> flags = {}) {
    std::vector<std::string> argv = {stager_,  "run",    "--project",
                                     project_, "--mode", Name(mode)};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.push_back("--");
    return argv;
  }

  RunResult RunArgv(std::vector<std::string> argv) {
    RunOptions options;
    options.argv = std::move(argv);
    options.capture_output = true;
    auto result = RunOnHost(options, project_);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : RunResult();
  }
  RunResult Host(std::vector<std::string> argv) { return RunArgv(argv); }
  RunResult Stager(Mode mode, std::vector<std::string> command,
                   std::vector<std::string> flags = {}) {
    std::vector<std::string> argv = StagerArgv(mode, flags);
    argv.insert(argv.end(), command.begin(), command.end());
    return RunArgv(argv);
  }
  // The command's output: stdout in direct mode; in staged mode stdout is
  // the ChangeSet and the command's output is on stderr, after the
  // stager's own lines.
  static std::string Output(Mode mode, const RunResult& result) {
    if (mode == Mode::kDirect) return result.stdout_data;
    std::string kept;
    for (absl::string_view line : absl::StrSplit(result.stderr_data, '\n')) {
      if (line.empty() || absl::StartsWith(line, "garuda-stager:")) continue;
      absl::StrAppend(&kept, line, "\n");
    }
    return kept;
  }
  std::vector<std::string> Shell(const std::string& script) {
    return {"/bin/sh", "-c", script};
  }
  void UserSettings(const std::string& json) {
    ASSERT_TRUE(
        WriteFileAtomically(home_ + "/.garuda/settings.json", json, 0644).ok());
  }
  void ProjectSettings(const std::string& json) {
    ASSERT_TRUE(
        WriteFileAtomically(project_ + "/.garuda/settings.json", json, 0644)
            .ok());
  }
};

constexpr Mode kModes[] = {Mode::kDirect, Mode::kStaged};

// 1. A writable path resolved through a link. Variants: a link to a folder
// outside, a path below such a link, a chain of links, a link to "..", an
// absolute path through a link, and the same in sandbox.writePaths of the
// person's own settings. Control: the link itself does lead outside (a
// write through it on the host lands there).
TEST_F(RedTeamTest, WritablePathThroughALink) {
  ASSERT_TRUE(MakeDirectories(outside_ + "/sub", 0755).ok());
  ASSERT_EQ(::symlink(outside_.c_str(), (project_ + "/link").c_str()), 0);
  ASSERT_EQ(::symlink("link", (project_ + "/chain").c_str()), 0);
  ASSERT_EQ(::symlink("..", (project_ + "/up").c_str()), 0);
  RunResult control = Host(
      Shell("echo x > link/sub/control && cat " + outside_ + "/sub/control"));
  ASSERT_EQ(control.stdout_data, "x\n") << "control: the link leads outside";
  std::vector<std::string> variants = {"link",       "link/sub",
                                       "chain",      "chain/sub",
                                       "up/outside", project_ + "/link/sub"};
  for (Mode mode : kModes) {
    for (const std::string& write : variants) {
      std::string marker = outside_ + "/sub/escaped";
      ::unlink(marker.c_str());
      RunResult result =
          Stager(mode, Shell("echo x > " + marker), {"--write", write});
      EXPECT_FALSE(Exists(marker)) << Name(mode) << " --write " << write;
      EXPECT_NE(result.stderr_data.find("symbolic link"), std::string::npos)
          << Name(mode) << " --write " << write << ": " << result.stderr_data;
    }
    UserSettings(R"({"sandbox":{"writePaths":["link/sub"]}})");
    RunResult result = Stager(mode, Shell("true"));
    EXPECT_NE(result.exit_code, 0) << Name(mode);
    EXPECT_NE(result.stderr_data.find("symbolic link"), std::string::npos)
        << result.stderr_data;
    UserSettings("{}");
  }
  // Control in the sandbox: the same folder named without the link is
  // writable.
  RunResult direct =
      Stager(Mode::kDirect, Shell("echo x > " + outside_ + "/sub/named"),
             {"--write", outside_ + "/sub"});
  EXPECT_EQ(direct.exit_code, 0) << direct.stderr_data;
  EXPECT_TRUE(Exists(outside_ + "/sub/named"));
}

// 3. The project's settings outrank the person's. The person's settings say
// staged and network off; the project's say direct, network on, more
// processes and a write path: each is ignored and the first lines say so.
// Control: the person's own settings widening the same way are taken.
TEST_F(RedTeamTest, ProjectSettingsCannotWidenThePersons) {
  UserSettings(R"({"commands":{"mode":"staged"},"sandbox":{"network":false}})");
  ProjectSettings(R"({"commands":{"mode":"direct"},
                      "sandbox":{"network":true,"writePaths":["x"],
                                 "limits":{"processes":100000}}})");
  // No --mode: the settings decide. Staged: the write stays in the change
  // set, the project file is not made.
  std::vector<std::string> argv = {stager_, "run", "--project", project_, "--"};
  argv.insert(argv.end(), {"/bin/sh", "-c", "echo x > written"});
  RunResult result = RunArgv(argv);
  EXPECT_FALSE(Exists(project_ + "/written")) << result.stderr_data;
  for (const char* ignored :
       {"commands.mode \"direct\" is ignored",
        "sandbox.network true is ignored", "sandbox.writePaths is ignored",
        "sandbox.limits.processes 100000 is ignored"}) {
    EXPECT_NE(result.stderr_data.find(ignored), std::string::npos)
        << ignored << " not said in: " << result.stderr_data;
  }
  // The network stays off: no interface but loopback (two header lines).
  auto lines = [](const std::string& text) {
    return std::count(text.begin(), text.end(), '\n');
  };
  std::string host_interfaces = *ReadFileToString("/proc/net/dev");
  ASSERT_GT(lines(host_interfaces), 3) << "this host has only a loopback";
  RunResult network = Stager(Mode::kDirect, Shell("cat /proc/net/dev"));
  EXPECT_EQ(lines(network.stdout_data), 3) << network.stdout_data;

  // Control: the person's own settings say direct and network on.
  UserSettings(R"({"commands":{"mode":"direct"},"sandbox":{"network":true}})");
  result = RunArgv(argv);
  EXPECT_TRUE(Exists(project_ + "/written")) << result.stderr_data;
  network = Stager(Mode::kDirect, Shell("cat /proc/net/dev"));
  EXPECT_EQ(lines(network.stdout_data), lines(host_interfaces))
      << "control: the host's interfaces with the person's network on";
}

// 4. .git moved aside, replaced, or its config, hooks and info written in
// direct mode. Control: each works on the host. Ordinary git still works in
// the sandbox (objects, refs, index).
TEST_F(RedTeamTest, GitCannotBeMovedOrReconfigured) {
  ASSERT_TRUE(WriteFileAtomically(project_ + "/f", "f\n", 0644).ok());
  const std::vector<std::pair<std::string, std::string>> attacks = {
      {"mv .git .git2 && mkdir -p .git/hooks", ".git2"},
      {"rm -rf .git; mkdir -p .git/hooks && echo x > .git/hooks/pre-commit",
       ".git/hooks/pre-commit"},
      {"git config core.fsmonitor 'touch fsmonitor-ran'", ""},
      {"echo '[core] pager = touch pager-ran' >> .git/config", ""},
      {"printf '[core]\\n\\tsshCommand = touch ran\\n' > .git/config.new && "
       "mv .git/config.new .git/config",
       ""},
      {"mkdir -p .git/info && echo '* filter=x' > .git/info/attributes",
       ".git/info/attributes"},
  };
  std::string config = *ReadFileToString(project_ + "/.git/config");
  for (const auto& [attack, made] : attacks) {
    // A repository to attack each time ("rm -rf .git" empties it: the
    // folder itself stays, a mount point, with its config and hooks).
    ASSERT_EQ(Host({"git", "init", "-q"}).exit_code, 0);
    RunResult result = Stager(Mode::kDirect, Shell(attack));
    EXPECT_EQ(*ReadFileToString(project_ + "/.git/config"), config) << attack;
    if (!made.empty()) {
      EXPECT_FALSE(Exists(JoinPath(project_, made))) << attack;
    }
    EXPECT_TRUE(Exists(project_ + "/.git/config")) << attack;
  }
  ASSERT_EQ(Host({"git", "init", "-q"}).exit_code, 0);
  RunResult git =
      Stager(Mode::kDirect,
             Shell("git add f && git -c user.name=t -c user.email=t@t commit "
                   "-qm m && git log --oneline | wc -l"));
  EXPECT_EQ(git.stdout_data, "1\n") << git.stderr_data;
  // Control: on the host the same moves and writes work.
  RunResult host = Host(Shell("git config core.fsmonitor x && mv .git .git2"));
  EXPECT_EQ(host.exit_code, 0) << host.stderr_data;
  EXPECT_TRUE(Exists(project_ + "/.git2/config"));
}

// 5. Setuid and setgid files. Variants: chmod u+s, g+s, octal, install -m,
// cp -p of a setuid program, open(O_CREAT) with the mode, O_TMPFILE and
// linkat, mknod. Control: each works on the host (as root and as a user
// alike: a file's owner may set its set-id bits).
TEST_F(RedTeamTest, NoSetIdFiles) {
  ASSERT_TRUE(WriteFileAtomically(project_ + "/seed", "", 0755).ok());
  const std::vector<std::vector<std::string>> attacks = {
      Shell("cp seed a && chmod u+s a && test -u a"),
      Shell("cp seed a && chmod g+s a && test -g a"),
      Shell("cp seed a && chmod 6755 a && test -u a"),
      Shell("install -m 4755 seed a && test -u a"),
      Shell("cp seed s && chmod 4755 s && cp -p s a && test -u a"),
      {helper_, "setid", "open", project_ + "/a", "4755"},
      {helper_, "setid", "open", project_ + "/a", "2755"},
      {helper_, "setid", "tmpfile", project_ + "/a", "4755"},
      {helper_, "setid", "mknod", project_ + "/a", "4755"},
  };
  for (const std::vector<std::string>& attack : attacks) {
    std::string shown = attack.back();
    ::unlink((project_ + "/a").c_str());
    ::unlink((project_ + "/s").c_str());
    RunResult host = Host(attack);
    EXPECT_EQ(host.exit_code, 0)
        << "control failed on the host: " << shown << ": " << host.stderr_data;
    for (Mode mode : kModes) {
      ::unlink((project_ + "/a").c_str());
      ::unlink((project_ + "/s").c_str());
      RunResult result = Stager(mode, attack);
      EXPECT_NE(result.exit_code, 0) << Name(mode) << ": " << shown;
      struct stat st;
      if (::stat((project_ + "/a").c_str(), &st) == 0) {
        EXPECT_EQ(st.st_mode & (S_ISUID | S_ISGID), 0u)
            << Name(mode) << ": " << shown;
      }
    }
  }
  // And a set-id program does not gain anything inside: the project is
  // mounted nosuid.
  RunResult mounts = Stager(
      Mode::kDirect, Shell("grep ' " + project_ + " ' /proc/self/mountinfo"));
  EXPECT_NE(mounts.stdout_data.find("nosuid"), std::string::npos)
      << mounts.stdout_data;
}

// Starts `argv` as the leader of a new session whose controlling terminal
// is a pseudo-terminal of ours, its standard descriptors redirected away
// from it (as an agent's command's would be), in the same process group as
// a victim process; returns the argv's exit code and whether the victim
// got the group's signal.
struct GroupRun {
  int exit_code = -1;
  bool victim_signaled = false;
  std::string output;
};

GroupRun RunInATerminalSession(const std::vector<std::string>& argv) {
  GroupRun run;
  int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  EXPECT_GE(master, 0);
  ::grantpt(master);
  ::unlockpt(master);
  std::string slave_name = ::ptsname(master);
  int out[2];
  EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
  int ready[2];
  EXPECT_EQ(::pipe2(ready, O_CLOEXEC), 0);
  pid_t leader = ::fork();
  if (leader == 0) {
    ::setsid();
    int slave = ::open(slave_name.c_str(), O_RDWR);
    if (slave < 0 || ::ioctl(slave, TIOCSCTTY, 0) != 0) ::_exit(120);
    ::close(slave);
    // The victim: in the leader's process group, pausing until a signal.
    pid_t victim = ::fork();
    if (victim == 0) {
      ::close(ready[0]);
      ::close(ready[1]);
      ::pause();
      ::_exit(0);
    }
    (void)!::write(ready[1], &victim, sizeof victim);
    int null_fd = ::open("/dev/null", O_RDONLY);
    ::dup2(null_fd, 0);
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    std::vector<char*> args;
    for (const std::string& arg : argv)
      args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    ::signal(SIGUSR1, SIG_IGN);  // the launcher survives its group's signal
    pid_t command = ::fork();
    if (command == 0) {
      ::signal(SIGUSR1, SIG_DFL);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(command, &status, 0);
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  ::close(out[1]);
  ::close(ready[1]);
  pid_t victim = -1;
  EXPECT_EQ(::read(ready[0], &victim, sizeof victim),
            static_cast<ssize_t>(sizeof victim));
  ::close(ready[0]);
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(out[0], buffer, sizeof buffer)) > 0)
    run.output.append(buffer, n);
  ::close(out[0]);
  int status = 0;
  EXPECT_TRUE(WaitWithDeadline(leader, 60000, &status)) << "the run hung";
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  // A fatal signal's effect is decided when it is sent: by now the victim
  // is dying of SIGUSR1 or still pausing; SIGKILL tells the two apart.
  ::kill(victim, SIGKILL);
  // The victim was the leader's child; this process is a subreaper, so it
  // is ours now, and its wait status says which signal ended it.
  (void)::waitpid(victim, &status, 0);
  run.victim_signaled = WIFSIGNALED(status) && WTERMSIG(status) == SIGUSR1;
  ::close(master);
  return run;
}

// 6. /dev/tty and the launcher's process group. Control: without the
// sandbox's new session (the helper run directly by the same launcher),
// both attacks work.
TEST_F(RedTeamTest, NoControllingTerminalAndNoSignalToTheLaunchersGroup) {
  // The victim must be our child for its wait status: make this process
  // a subreaper, so that the leader's orphans come to us.
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  GroupRun tty = RunInATerminalSession({helper_, "tty"});
  EXPECT_EQ(tty.exit_code, 0) << "control: /dev/tty opens without a new "
                                 "session: "
                              << tty.output;
  GroupRun kill = RunInATerminalSession({helper_, "killgroup"});
  EXPECT_EQ(kill.exit_code, 0) << kill.output;
  EXPECT_TRUE(kill.victim_signaled) << "control: kill(0) reached the group";
  for (Mode mode : kModes) {
    std::vector<std::string> argv = StagerArgv(mode);
    argv.insert(argv.end(), {helper_, "tty"});
    tty = RunInATerminalSession(argv);
    EXPECT_EQ(tty.exit_code, 1) << Name(mode) << ": " << tty.output;
    EXPECT_NE(tty.output.find("open /dev/tty"), std::string::npos)
        << tty.output;
    argv = StagerArgv(mode);
    argv.insert(argv.end(), {helper_, "killgroup"});
    kill = RunInATerminalSession(argv);
    EXPECT_FALSE(kill.victim_signaled)
        << Name(mode) << ": the command's kill(0) reached its launcher's group";
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

// 7. A signal to the stager ends the command and everything it started,
// promptly, even when they ignore the signal. Control: the same command on
// the host, sent the same signal, lives on.
TEST_F(RedTeamTest, ASignalToTheStagerEndsEverything) {
  std::string script =
      "trap '' TERM HUP INT; (trap '' TERM HUP INT; exec sleep 1000) & "
      "echo ready; exec sleep 1000";
  auto run_and_signal = [&](std::vector<std::string> argv, int sig) {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      // Staged mode writes the command's output to stderr.
      ::dup2(fds[1], 1);
      ::dup2(fds[1], 2);
      std::vector<char*> args;
      for (std::string& arg : argv) args.push_back(arg.data());
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    UniqueFd read_end(fds[0]);
    // The command runs once "ready" is there (after the stager's own first
    // line in staged mode); a deadline, not a hang, if it never comes.
    std::string seen;
    char buffer[256];
    while (seen.find("ready\n") == std::string::npos) {
      struct pollfd in = {read_end.get(), POLLIN, 0};
      ssize_t n = ::poll(&in, 1, 30000) == 1
                      ? ::read(read_end.get(), buffer, sizeof buffer)
                      : -1;
      if (n <= 0) break;
      seen.append(buffer, n);
    }
    EXPECT_NE(seen.find("ready\n"), std::string::npos) << seen;
    EXPECT_EQ(::kill(pid, sig), 0);
    int status = 0;
    bool ended = WaitWithDeadline(pid, 10000, &status);
    // Everything that held the pipe is gone: end of file within the
    // deadline (the sleeps would hold it for 1000 s).
    bool all_gone = false;
    while (ended) {
      struct pollfd eof = {read_end.get(), POLLIN, 0};
      if (::poll(&eof, 1, 10000) != 1) break;  // still held: not all gone
      ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
      if (n <= 0) {
        all_gone = n == 0;
        break;
      }
    }
    ::kill(-pid, SIGKILL);
    return all_gone;
  };
  EXPECT_FALSE(run_and_signal(Shell(script), SIGTERM))
      << "control: the command ignores SIGTERM on the host";
  for (Mode mode : kModes) {
    for (int sig : {SIGTERM, SIGHUP}) {
      std::vector<std::string> argv = StagerArgv(mode);
      argv.insert(argv.end(), {"/bin/sh", "-c", script});
      EXPECT_TRUE(run_and_signal(argv, sig))
          << Name(mode) << ": " << ::strsignal(sig)
          << " to garuda-stager left the command running";
    }
  }
}

// 8. Secrets under /etc, by what they hold: every shadow file and its
// backup, sudoers, private keys, whatever the host keeps from others.
// Control: each is readable on the host (by root: the test skips
// otherwise, as an unprivileged user could not read them anyway).
TEST_F(RedTeamTest, SecretsUnderEtcAreDenied) {
  RecordProperty("negative_control", "true");  // tools/test_summary.py
  if (::geteuid() != 0) GTEST_SKIP() << "the controls read them as root";
  std::vector<std::string> secrets;
  for (const char* path :
       {"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
        "/etc/sudoers", "/etc/security/opasswd", "/etc/ssh/ssh_host_rsa_key",
        "/etc/ssh/ssh_host_ed25519_key", "/etc/ssl/private"}) {
    if (Exists(path)) secrets.push_back(path);
  }
  ASSERT_GE(secrets.size(), 2u) << "too few of the usual secrets on this host";
  for (const std::string& path : secrets) {
    std::string read =
        "cat " + path + " 2>/dev/null || ls -A " + path + "/ 2>/dev/null";
    RunResult host = Host(Shell(read));
    ASSERT_EQ(host.exit_code, 0) << "control: " << path;
    for (Mode mode : kModes) {
      RunResult result = Stager(mode, Shell(read));
      EXPECT_NE(result.exit_code, 0) << Name(mode) << ": read " << path;
      EXPECT_EQ(Output(mode, result), "") << Name(mode) << ": " << path;
    }
  }
}

// 9. No host socket with the network off: a walk of the sandbox's whole
// tree finds none. (The control, /run bound with the network on, is in
// sandbox/mount_plan_test.cc: this host has no resolver socket to show.)
TEST_F(RedTeamTest, NoHostSocketWithTheNetworkOff) {
  for (Mode mode : kModes) {
    RunResult result =
        Stager(mode, Shell("find / \\( -path /proc -o -path /sys \\) -prune -o "
                           "-type s -print 2>/dev/null; ls -d /run /var/run/* "
                           "2>/dev/null; true"));
    EXPECT_EQ(result.exit_code, 0) << result.stderr_data;
    EXPECT_EQ(Output(mode, result), "") << Name(mode);
  }
}

// 10. Default bounds: a process limit that a fork bomb meets, and a sized
// /tmp and /dev/shm. Controls: the person's own settings raise them.
TEST_F(RedTeamTest, DefaultLimits) {
  // 1100 waiting children, then the count of the sandbox's processes (its
  // own PID namespace); the shell gives up at the first fork refused.
  std::string forks =
      "i=0; while [ $i -lt 1100 ]; do sleep 30 & i=$((i+1)); done 2>/dev/null;"
      " ls /proc | grep -c '^[0-9]*$'";
  for (Mode mode : kModes) {
    RunResult result = Stager(mode, Shell(forks));
    EXPECT_LT(std::atoi(Output(mode, result).c_str()), 1100)
        << Name(mode) << ": " << result.stderr_data;
    EXPECT_NE(result.exit_code, 0) << Name(mode) << ": a fork was refused";
    RunResult sizes = Stager(mode, Shell("df -k /tmp /dev/shm | tail -2"));
    std::string shown = Output(mode, sizes);
    EXPECT_NE(shown.find(absl::StrCat(2048 * 1024)), std::string::npos)
        << Name(mode) << ": " << shown;
    EXPECT_NE(shown.find(absl::StrCat(512 * 1024)), std::string::npos)
        << Name(mode) << ": " << shown;
  }
  UserSettings(R"({"sandbox":{"limits":{"processes":4096,"tmpMb":16}}})");
  RunResult raised = Stager(Mode::kDirect, Shell(forks));
  EXPECT_GE(std::atoi(raised.stdout_data.c_str()), 1100)
      << "control: the person raised the limit: " << raised.stderr_data;
  RunResult full = Stager(
      Mode::kDirect, Shell("dd if=/dev/zero of=/tmp/x bs=1M count=20 2>&1"));
  EXPECT_NE(full.exit_code, 0) << "/tmp of 16 MiB took 20 MiB";
  UserSettings(R"({"sandbox":{"limits":{"tmpMb":64}}})");
  full = Stager(Mode::kDirect,
                Shell("dd if=/dev/zero of=/tmp/x bs=1M count=20 2>&1"));
  EXPECT_EQ(full.exit_code, 0) << "control: " << full.stdout_data;
}

// 10, second part: what a command keeps in its tmpfs counts in its memory
// limit where a memory cgroup exists (the pages are charged to the cgroup
// of the process that writes them). Control: without the memory limit the
// same 96 MiB fit in /tmp.
TEST_F(RedTeamTest, TmpfsCountsInTheMemoryLimit) {
  CgroupPlace place = FindCgroupPlace(CgroupController::kMemory);
  if (!place.available) GTEST_SKIP() << "no memory cgroup: " << place.reason;
  std::string fill = "dd if=/dev/zero of=/tmp/x bs=1M count=96 2>&1";
  UserSettings(R"({"sandbox":{"limits":{"memoryMb":48}}})");
  for (Mode mode : kModes) {
    RunResult result = Stager(mode, Shell(fill));
    EXPECT_NE(result.exit_code, 0)
        << Name(mode) << ": 96 MiB in /tmp under a 48 MiB memory limit";
  }
  UserSettings("{}");
  RunResult control = Stager(Mode::kDirect, Shell(fill));
  EXPECT_EQ(control.exit_code, 0) << control.stdout_data;
}

}  // namespace
}  // namespace garuda
