// garuda-stager run as a person uses it: exit codes, the strict profile's
// startup rule (T7) with a fake probe that finds no sandbox, and the
// --allow-host fallback of the default profile. Each refusal has its
// negative control.
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "sandbox/cgroup.h"
#include "sandbox/probe.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace {

class StagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "stgXXXXXX");
    root_ = ::mkdtemp(templ.data());
    project_ = JoinPath(root_, "project");
    home_ = JoinPath(root_, "home");
    etc_ = JoinPath(root_, "etc");
    for (const std::string& dir : {project_, home_, etc_}) {
      ASSERT_TRUE(MakeDirectories(dir, 0755).ok());
    }
    ::setenv("HOME", home_.c_str(), 1);
    ::setenv("GARUDA_MANAGED_POLICY_DIR", etc_.c_str(), 1);
    ::unsetenv(kPretendNoSandboxVariable);
    stager_ = JoinPath(std::getenv("TEST_SRCDIR"),
                       "garuda/cmd/garuda-stager/garuda-stager");
  }
  void TearDown() override { ::unsetenv(kPretendNoSandboxVariable); }

  RunResult Stager(std::vector<std::string> args) {
    RunOptions options;
    options.argv = {stager_};
    options.argv.insert(options.argv.end(), args.begin(), args.end());
    options.capture_output = true;
    auto result = RunOnHost(options, project_);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : RunResult();
  }
  void Write(const std::string& path, const std::string& text) {
    ASSERT_TRUE(MakeDirectories(Dirname(path), 0755).ok());
    ASSERT_TRUE(WriteFileAtomically(path, text, 0644).ok());
  }
  bool Exists(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
  }
  // A command whose effect shows whether it ran in the sandbox: inside,
  // the hostname is "garuda" and the folder outside the project is absent.
  std::vector<std::string> Marker() {
    return {"--", "/bin/sh", "-c",
            "touch ran; if [ -d " + home_ +
                " ]; then echo host; "
                "else echo sandbox; fi"};
  }
  std::vector<std::string> RunArgs(std::vector<std::string> extra) {
    std::vector<std::string> args = {"run", "--project", project_, "--mode",
                                     "direct"};
    args.insert(args.end(), extra.begin(), extra.end());
    for (const std::string& arg : Marker()) args.push_back(arg);
    return args;
  }

  std::string root_, project_, home_, etc_, stager_;
};

TEST_F(StagerTest, ExitCodeAndOutputAreTheCommands) {
  RunResult result = Stager({"run", "--project", project_, "--mode", "direct",
                             "--", "/bin/sh", "-c", "echo out; exit 7"});
  EXPECT_EQ(result.exit_code, 7) << result.stderr_data;
  EXPECT_EQ(result.stdout_data, "out\n");
}

TEST_F(StagerTest, RunsInTheSandboxWhenItWorks) {
  RunResult result = Stager(RunArgs({}));
  EXPECT_EQ(result.exit_code, 0) << result.stderr_data;
  EXPECT_EQ(result.stdout_data, "sandbox\n");
}

TEST_F(StagerTest, DefaultProfileWithoutSandboxNeedsAllowHost) {
  ::setenv(kPretendNoSandboxVariable, "1", 1);
  RunResult refused = Stager(RunArgs({}));
  EXPECT_EQ(refused.exit_code, 125);
  EXPECT_NE(refused.stderr_data.find("no working OS sandbox"),
            std::string::npos)
      << refused.stderr_data;
  EXPECT_NE(refused.stderr_data.find("--allow-host"), std::string::npos);
  EXPECT_FALSE(Exists(project_ + "/ran"));

  // Negative control: with --allow-host it runs, on the host, and says so.
  RunResult host = Stager(RunArgs({"--allow-host"}));
  EXPECT_EQ(host.exit_code, 0) << host.stderr_data;
  EXPECT_EQ(host.stdout_data, "host\n");
  EXPECT_NE(host.stderr_data.find("WITHOUT a sandbox"), std::string::npos);
  EXPECT_TRUE(Exists(project_ + "/ran"));
}

TEST_F(StagerTest, StrictFromAnySourceStopsAndRefusesAllowHost) {
  ::setenv(kPretendNoSandboxVariable, "1", 1);
  for (const std::string& file :
       {etc_ + "/policy.json", home_ + "/.garuda/policy.json",
        home_ + "/.garuda/settings.json",
        project_ + "/.garuda/settings.json"}) {
    Write(file, R"({"profile":"strict"})");
    RunResult result = Stager(RunArgs({"--allow-host"}));
    EXPECT_EQ(result.exit_code, 125) << file;
    EXPECT_NE(result.stderr_data.find("strict profile (from " + file),
              std::string::npos)
        << result.stderr_data;
    EXPECT_NE(result.stderr_data.find("fix:"), std::string::npos);
    EXPECT_NE(result.stderr_data.find("--allow-host is refused"),
              std::string::npos);
    EXPECT_FALSE(Exists(project_ + "/ran")) << file;
    ::unlink(file.c_str());
  }
}

TEST_F(StagerTest, ProjectDefaultDoesNotUndoPolicyStrict) {
  ::setenv(kPretendNoSandboxVariable, "1", 1);
  Write(home_ + "/.garuda/policy.json", R"({"profile":"strict"})");
  Write(project_ + "/.garuda/settings.json", R"({"profile":"default"})");
  RunResult result = Stager(RunArgs({"--allow-host"}));
  EXPECT_EQ(result.exit_code, 125);
  EXPECT_FALSE(Exists(project_ + "/ran"));
}

TEST_F(StagerTest, StrictWithAWorkingSandboxRuns) {
  // Negative control of the refusal: strict only refuses when the sandbox
  // does not work.
  Write(etc_ + "/policy.json", R"({"profile":"strict"})");
  RunResult result = Stager(RunArgs({}));
  EXPECT_EQ(result.exit_code, 0) << result.stderr_data;
  EXPECT_EQ(result.stdout_data, "sandbox\n");
}

TEST_F(StagerTest, RequireSandboxAlsoRefusesTheHost) {
  ::setenv(kPretendNoSandboxVariable, "1", 1);
  Write(etc_ + "/policy.json", R"({"requireSandbox":true})");
  RunResult result = Stager(RunArgs({"--allow-host"}));
  EXPECT_EQ(result.exit_code, 125);
  EXPECT_NE(result.stderr_data.find("requireSandbox"), std::string::npos);
  EXPECT_FALSE(Exists(project_ + "/ran"));
}

TEST_F(StagerTest, NetworkFlagCannotUndoAPolicysNetworkOff) {
  Write(etc_ + "/policy.json", R"({"sandbox":{"network":false}})");
  RunResult refused = Stager(RunArgs({"--network"}));
  EXPECT_EQ(refused.exit_code, 125);
  EXPECT_NE(refused.stderr_data.find(etc_ + "/policy.json"), std::string::npos)
      << refused.stderr_data;
  EXPECT_FALSE(Exists(project_ + "/ran"));
  // Negative control: the same flag with no policy on the network runs.
  ASSERT_EQ(::unlink((etc_ + "/policy.json").c_str()), 0);
  RunResult ran = Stager(RunArgs({"--network"}));
  EXPECT_EQ(ran.exit_code, 0) << ran.stderr_data;
  EXPECT_TRUE(Exists(project_ + "/ran"));
}

TEST_F(StagerTest, BadSettingsNameTheFileAndField) {
  std::string file = project_ + "/.garuda/settings.json";
  Write(file, R"({"profile":"strickt"})");
  RunResult result = Stager(RunArgs({}));
  EXPECT_EQ(result.exit_code, 125);
  EXPECT_NE(result.stderr_data.find(file), std::string::npos);
  EXPECT_NE(result.stderr_data.find("profile"), std::string::npos);
}

TEST_F(StagerTest, WritePathFlagMakesAPathWritable) {
  std::string extra = JoinPath(root_, "extra");
  ASSERT_TRUE(MakeDirectories(extra, 0755).ok());
  std::vector<std::string> command = {"--", "/bin/sh", "-c",
                                      "echo x > " + extra + "/f"};
  std::vector<std::string> without = {"run", "--project", project_, "--mode",
                                      "direct"};
  without.insert(without.end(), command.begin(), command.end());
  EXPECT_NE(Stager(without).exit_code, 0);
  EXPECT_FALSE(Exists(extra + "/f"));
  std::vector<std::string> with = {"run",    "--project", project_, "--mode",
                                   "direct", "--write",   extra};
  with.insert(with.end(), command.begin(), command.end());
  EXPECT_EQ(Stager(with).exit_code, 0);
  EXPECT_TRUE(Exists(extra + "/f"));
}

// Ctrl-C in a terminal sends SIGINT to the whole foreground process group:
// the command ends of it, and garuda-stager reports that (exit 130) rather
// than dying before it can.
TEST_F(StagerTest, InterruptEndsTheCommandAndIsReported) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(fds[1], 1);
    ::execl(stager_.c_str(), stager_.c_str(), "run", "--project",
            project_.c_str(), "--mode", "direct", "--", "/bin/sh", "-c",
            "echo ready; exec sleep 1000", nullptr);
    ::_exit(127);
  }
  ::close(fds[1]);
  ::setpgid(pid, pid);
  char buffer[6] = {};
  ASSERT_EQ(::read(fds[0], buffer, 6), 6);  // the command runs
  ::close(fds[0]);
  ASSERT_EQ(::killpg(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status))
      << "garuda-stager died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT);
}

// Runs a copy of garuda-stager as uid 65534 in a project of its own. (The
// copy and the project live in /tmp because the test's own folders are
// under root's home, which others cannot enter.)
class AsNobody {
 public:
  explicit AsNobody(const std::string& stager) {
    base_ = "/tmp/garuda-nonroot-XXXXXX";
    if (::mkdtemp(base_.data()) == nullptr) return;
    ::chmod(base_.c_str(), 0755);
    program_ = base_ + "/garuda-stager";
    project_ = base_ + "/project";
    std::filesystem::copy_file(stager, program_);
    ::chmod(program_.c_str(), 0755);
    (void)MakeDirectories(project_, 0755);
    ready_ = ::chown(project_.c_str(), 65534, 65534) == 0;
  }
  ~AsNobody() {
    std::error_code ignored;
    std::filesystem::remove_all(base_, ignored);
  }
  bool ready() const { return ready_; }
  const std::string& project() const { return project_; }

  // The wait status; the program's stdout in `output`.
  int Run(std::vector<std::string> args, std::string* output) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
    pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(fds[1], 1);
      if (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 ||
          ::setuid(65534) != 0 || ::chdir(project_.c_str()) != 0) {
        ::_exit(126);
      }
      ::setenv("HOME", project_.c_str(), 1);
      ::setenv("GARUDA_MANAGED_POLICY_DIR", (base_ + "/etc").c_str(), 1);
      args.insert(args.begin(), program_);
      std::vector<char*> argv;
      for (std::string& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      ::execv(program_.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    *output = ReadAll(fds[0]).value_or("");
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
  }

 private:
  std::string base_, program_, project_;
  bool ready_ = false;
};

// The sandbox does not rely on root: the same run as an unprivileged user.
TEST_F(StagerTest, WorksForAnUnprivilegedUser) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  AsNobody nobody(stager_);
  ASSERT_TRUE(nobody.ready());
  std::string output;
  int status = nobody.Run({"run", "--mode", "direct", "--", "/bin/sh", "-c",
                           "id -u; echo ok > f; ls /root"},
                          &output);
  // `ls /root` fails inside (absent), so the command exits non-zero; the
  // rest shows it ran as 65534 and wrote the project.
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 125 &&
              WEXITSTATUS(status) != 126)
      << status;
  EXPECT_EQ(output, "65534\n");
  EXPECT_EQ(ReadFileToString(nobody.project() + "/f").value_or(""), "ok\n");
}

// The probe says whether the memory and process limits get cgroups: an
// unprivileged user cannot make them here, root can.
TEST_F(StagerTest, ProbeSaysWhetherLimitsHaveCgroups) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to become another user";
  CgroupPlace place = FindCgroupPlace(CgroupController::kMemory);
  if (!place.available) GTEST_SKIP() << "no memory cgroup: " << place.reason;
  RunResult root = Stager({"probe"});
  EXPECT_NE(root.stdout_data.find("ok       memory limit in a cgroup"),
            std::string::npos)
      << root.stdout_data;
  EXPECT_NE(root.stdout_data.find("ok       process limit in a cgroup"),
            std::string::npos)
      << root.stdout_data;
  AsNobody nobody(stager_);
  ASSERT_TRUE(nobody.ready());
  std::string output;
  int status = nobody.Run({"probe"}, &output);
  // The sandbox itself works; the limits fall back, with reason and fix.
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  size_t line = output.find("MISSING  memory limit in a cgroup");
  ASSERT_NE(line, std::string::npos) << output;
  std::string rest = output.substr(line);
  EXPECT_NE(rest.find("reason: the memory limit is an address-space rlimit"),
            std::string::npos)
      << rest;
  EXPECT_NE(rest.find("fix: "), std::string::npos) << rest;
  EXPECT_NE(output.find("MISSING  process limit in a cgroup"),
            std::string::npos)
      << output;
}

// The limits of the settings reach the command: a project's memoryMb ends
// a command that allocates past it, reported as out of memory; without the
// setting the same command completes.
TEST_F(StagerTest, MemoryLimitFromTheSettingsEndsTheCommand) {
  CgroupPlace place = FindCgroupPlace(CgroupController::kMemory);
  if (!place.available) GTEST_SKIP() << "no memory cgroup: " << place.reason;
  std::vector<std::string> allocate = {
      "run",       "--project", project_, "--mode", "direct", "--",
      "/usr/bin/python3", "-c", "x = b'a' * (256 << 20); print(len(x))"};
  RunResult unlimited = Stager(allocate);
  EXPECT_EQ(unlimited.exit_code, 0) << unlimited.stderr_data;

  Write(project_ + "/.garuda/settings.json",
        R"({"sandbox":{"limits":{"memoryMb":64}}})");
  RunResult limited = Stager(allocate);
  EXPECT_NE(limited.exit_code, 0);
  EXPECT_NE(limited.stderr_data.find("out of memory"), std::string::npos)
      << limited.stderr_data;
}

// A tool call's timeout can lower the settings' wall time, and the wall
// time of the settings ends a command that runs past it.
TEST_F(StagerTest, WallTimeFromTheSettingsEndsTheCommand) {
  Write(home_ + "/.garuda/settings.json",
        R"({"sandbox":{"limits":{"wallTimeSeconds":1}}})");
  RunResult result = Stager({"run", "--project", project_, "--mode", "direct",
                             "--", "/bin/sleep", "30"});
  EXPECT_EQ(result.exit_code, 124) << result.stderr_data;
  // Control: a command that ends in time is not touched.
  result = Stager({"run", "--project", project_, "--mode", "direct", "--",
                   "/bin/true"});
  EXPECT_EQ(result.exit_code, 0) << result.stderr_data;
}

TEST_F(StagerTest, ProbeJson) {
  RunResult result = Stager({"probe", "--json"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_NE(result.stdout_data.find("\"sandbox\":true"), std::string::npos);
  ::setenv(kPretendNoSandboxVariable, "1", 1);
  result = Stager({"probe"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.stdout_data.find("fix:"), std::string::npos);
}

}  // namespace
}  // namespace garuda
