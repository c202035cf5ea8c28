// The escape corpus: each attempt runs three ways. On the host it must work
// (the negative control: the attempt is real and the test can see it work);
// in `garuda-stager run --mode direct` it must fail; under bubblewrap with
// an equivalent policy it must give the same outcome as our sandbox.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/lockdown/seccomp_filter.h"
#include "lib/policy/merge.h"
#include "sandbox/bwrap_args.h"
#include "sandbox/command_policy.h"
#include "sandbox/sandbox.h"
#include "tests/sandbox/corpus_places.h"

namespace garuda {
namespace {

enum class Where { kHost, kOurs, kBwrap };

const char* Name(Where where) {
  switch (where) {
    case Where::kHost:
      return "host";
    case Where::kOurs:
      return "garuda-stager";
    case Where::kBwrap:
      return "bwrap";
  }
  return "?";
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// The helper ran to its end (0 done, 1 refused), as opposed to the sandbox
// refusing to start, which would prove nothing.
bool HelperRan(const RunResult& result) {
  return result.kind == RunResult::Kind::kExited && result.exit_code <= 1;
}

// A host process that sleeps until Stop(), in the folder `folder`.
class Sleeper {
 public:
  // Returns once the process runs sleep(1) in `folder`: the end of a
  // close-on-exec pipe says the chdir and the exec are done. (Returning at
  // the fork raced the child's chdir: under load the host control went
  // through the test's own working folder and wrote nothing.)
  explicit Sleeper(const char* folder = nullptr) {
    int ready[2];
    if (::pipe2(ready, O_CLOEXEC) != 0) {
      pid_ = -1;
      ADD_FAILURE() << "pipe2: " << std::strerror(errno);
      return;
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(ready[0]);
      if (folder != nullptr && ::chdir(folder) != 0) ::_exit(127);
      ::execl("/bin/sleep", "sleep", "1000", nullptr);
      ::_exit(127);
    }
    ::close(ready[1]);
    char byte;
    while (::read(ready[0], &byte, 1) < 0 && errno == EINTR) {
    }
    ::close(ready[0]);
  }
  ~Sleeper() { Stop(); }
  pid_t pid() const { return pid_; }
  void Stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_;
};

struct Attempt {
  std::vector<std::string> args;  // for the helper, or a whole command
  bool helper = true;             // args go to escape_helper
  std::function<void()> reset = [] {};
  std::function<bool(const RunResult&)> escaped = [](const RunResult& r) {
    return r.kind == RunResult::Kind::kExited && r.exit_code == 0;
  };
};

class EscapeTest : public CorpusTest {
 protected:
  void SetUp() override {
    SetUpPlaces("esc");
    if (HasFatalFailure()) return;
    for (const std::string& dir :
         {project_ + "/.git/hooks", project_ + "/mnt"}) {
      ASSERT_TRUE(MakeDirectories(dir, 0755).ok());
    }
    bwrap_ = FindBwrap();
    // The bubblewrap half is part of every attempt: without bwrap the test
    // fails (tools/setup.sh installs it), unless the machine says it cannot
    // have it, and then the whole test is a visible skip, never a quiet
    // half-pass.
    if (bwrap_.empty()) {
      const char* skip = std::getenv("GARUDA_TEST_SKIP_BWRAP");
      if (skip != nullptr && std::string(skip) == "1") {
        GTEST_SKIP() << "bwrap is not installed and GARUDA_TEST_SKIP_BWRAP=1";
      }
      FAIL() << "bwrap is not installed (/usr/bin/bwrap): run tools/setup.sh, "
                "or set GARUDA_TEST_SKIP_BWRAP=1 to skip the escape corpus";
    }
    // bubblewrap gets the same seccomp filter as our sandbox, compiled to
    // BPF, on a descriptor it inherits (no O_CLOEXEC on purpose).
    auto policy = SeccompPolicyForRole("command", false);
    ASSERT_TRUE(policy.ok()) << policy.status();
    auto filter = SeccompFilter::Build(*policy);
    ASSERT_TRUE(filter.ok()) << filter.status();
    auto bpf = filter->ExportBpf();
    ASSERT_TRUE(bpf.ok()) << bpf.status();
    seccomp_bpf_.Reset(::memfd_create("command_bpf", 0));
    ASSERT_TRUE(seccomp_bpf_.valid());
    ASSERT_TRUE(WriteAll(seccomp_bpf_.get(), *bpf).ok());
    auto network_policy = SeccompPolicyForRole("command", true);
    ASSERT_TRUE(network_policy.ok());
    auto network_filter = SeccompFilter::Build(*network_policy);
    ASSERT_TRUE(network_filter.ok());
    auto network_bpf = network_filter->ExportBpf();
    ASSERT_TRUE(network_bpf.ok());
    seccomp_network_bpf_.Reset(::memfd_create("command_network_bpf", 0));
    ASSERT_TRUE(WriteAll(seccomp_network_bpf_.get(), *network_bpf).ok());
    ASSERT_TRUE(WriteFileAtomically(project_ + "/.git/hooks/pre-commit",
                                    "secret-hook", 0755)
                    .ok());
    ASSERT_TRUE(WriteFileAtomically(project_ + "/.garuda/settings.json",
                                    "{\"profile\":\"default\"}", 0644)
                    .ok());
  }

  // bubblewrap with the policy garuda-stager builds for the same request.
  std::vector<std::string> BwrapArgs(bool network) {
    auto settings = MergeSettings(SettingsSources());
    EXPECT_TRUE(settings.ok());
    CommandRequest request;
    request.project = project_;
    request.working_directory = project_;
    request.network = network;
    request.environment = CurrentEnvironment();
    auto policy = DirectCommandPolicy(*settings, request);
    EXPECT_TRUE(policy.ok()) << policy.status();
    const UniqueFd& bpf = network ? seccomp_network_bpf_ : seccomp_bpf_;
    ::lseek(bpf.get(), 0, SEEK_SET);  // bwrap reads it from where it is
    return BwrapArgsFor(bwrap_, *policy, bpf.get());
  }

  RunResult Run(Where where, const Attempt& attempt, bool network = false) {
    std::vector<std::string> argv;
    if (where == Where::kOurs) {
      argv = {stager_, "run", "--project", project_, "--mode", "direct"};
      if (network) argv.push_back("--network");
      argv.push_back("--");
    } else if (where == Where::kBwrap) {
      argv = BwrapArgs(network);
    }
    if (attempt.helper) argv.push_back(helper_);
    argv.insert(argv.end(), attempt.args.begin(), attempt.args.end());
    RunOptions options;
    options.argv = argv;
    options.capture_output = true;
    auto result = RunOnHost(options, project_);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : RunResult();
  }

  // The attempt works on the host, fails in our sandbox, and bubblewrap
  // agrees with our sandbox.
  void ExpectContained(const std::string& name, const Attempt& attempt) {
    attempt.reset();
    RunResult host = Run(Where::kHost, attempt);
    EXPECT_TRUE(attempt.escaped(host))
        << name << ": negative control failed, the attempt does not work "
        << "even on the host: " << host.Describe() << " " << host.stderr_data;
    attempt.reset();
    RunResult ours = Run(Where::kOurs, attempt);
    bool ours_escaped = attempt.escaped(ours);
    EXPECT_FALSE(ours_escaped) << name << ": ESCAPED garuda-stager's sandbox";
    EXPECT_TRUE(HelperRan(ours))
        << name << ": " << ours.Describe() << " " << ours.stderr_data;
    if (bwrap_.empty()) return;  // SetUp failed or skipped the test
    attempt.reset();
    RunResult bwrap = Run(Where::kBwrap, attempt);
    EXPECT_TRUE(HelperRan(bwrap))
        << name << ": bwrap: " << bwrap.Describe() << " " << bwrap.stderr_data;
    EXPECT_EQ(attempt.escaped(bwrap), ours_escaped)
        << name
        << ": bwrap and garuda-stager disagree; bwrap: " << bwrap.Describe()
        << " " << bwrap.stderr_data;
  }

  Attempt WriteAttempt(const std::string& written_path,
                       const std::string& checked_path) {
    Attempt attempt;
    attempt.args = {"write", written_path};
    attempt.reset = [checked_path] { ::unlink(checked_path.c_str()); };
    attempt.escaped = [checked_path](const RunResult&) {
      return Exists(checked_path);
    };
    return attempt;
  }

  std::string bwrap_;
  UniqueFd seccomp_bpf_;
  UniqueFd seccomp_network_bpf_;
};

TEST_F(EscapeTest, WriteHomeFolder) {
  std::string path = JoinPath(home_, "escape");
  ExpectContained("write home", WriteAttempt(path, path));
}

TEST_F(EscapeTest, WriteEtc) {
  RecordProperty("negative_control", "true");  // tools/test_summary.py
  if (::geteuid() != 0) GTEST_SKIP() << "the negative control needs root";
  std::string path = absl::StrCat("/etc/garuda-escape-test-", ::getpid());
  ExpectContained("write /etc", WriteAttempt(path, path));
  ::unlink(path.c_str());
}

TEST_F(EscapeTest, WriteHostTmp) {
  std::string path = absl::StrCat("/tmp/garuda-escape-test-", ::getpid());
  ExpectContained("write host /tmp", WriteAttempt(path, path));
  ::unlink(path.c_str());
}

TEST_F(EscapeTest, WriteThroughPlantedSymlink) {
  ASSERT_EQ(::symlink(outside_.c_str(), (project_ + "/link").c_str()), 0);
  ExpectContained("symlink",
                  WriteAttempt(project_ + "/link/f", outside_ + "/f"));
}

TEST_F(EscapeTest, WriteThroughProcSelfRoot) {
  ExpectContained(
      "/proc/self/root",
      WriteAttempt("/proc/self/root" + outside_ + "/r", outside_ + "/r"));
}

TEST_F(EscapeTest, WriteThroughProc1Cwd) {
  // Inside, PID 1 is the sandbox's first process. On the host, PID 1 may
  // belong to a container's runtime that we cannot inspect, so the negative
  // control goes through the working folder of a process of ours whose
  // working folder is "/", which is what /proc/1/cwd is on a plain host.
  Sleeper sleeper("/");
  std::string checked = outside_ + "/c";
  Attempt host = WriteAttempt(
      absl::StrCat("/proc/", sleeper.pid(), "/cwd", outside_, "/c"), checked);
  host.reset();
  EXPECT_TRUE(host.escaped(Run(Where::kHost, host))) << "negative control";
  sleeper.Stop();
  Attempt inside = WriteAttempt("/proc/1/cwd" + outside_ + "/c", checked);
  for (Where where : {Where::kOurs, Where::kBwrap}) {
    if (where == Where::kBwrap && bwrap_.empty()) continue;
    inside.reset();
    RunResult result = Run(where, inside);
    EXPECT_FALSE(inside.escaped(result)) << Name(where);
    EXPECT_EQ(result.exit_code, 1) << Name(where) << ": " << result.stderr_data;
  }
}

TEST_F(EscapeTest, WriteThroughHardLink) {
  std::string target = outside_ + "/target";
  std::string link = project_ + "/hardlink";
  Attempt attempt;
  attempt.args = {"hardlink", target, link};
  attempt.reset = [target, link] {
    ::unlink(link.c_str());
    ASSERT_TRUE(WriteFileAtomically(target, "original", 0644).ok());
  };
  attempt.escaped = [target](const RunResult&) {
    return *ReadFileToString(target) != "original";
  };
  ExpectContained("hard link", attempt);
}

TEST_F(EscapeTest, WriteThroughDotDot) {
  ExpectContained("..", WriteAttempt(project_ + "/../outside/dotdot",
                                     outside_ + "/dotdot"));
}

TEST_F(EscapeTest, PtraceOfAProcessOutside) {
  Sleeper sleeper;
  Attempt attempt;
  attempt.args = {"ptrace", absl::StrCat(sleeper.pid())};
  ExpectContained("ptrace", attempt);
  sleeper.Stop();
}

// The command must not be able to write the memory of the sandbox's PID 1
// (which holds the caller's copy of the policy and pipes). PID 1 keeps its
// capabilities in the sandbox's user namespace and the command has none, so the
// kernel's ptrace check refuses. (Without that, e.g. with PID 1's capabilities
// dropped, the open works, as it does under bubblewrap, whose PID 1 has none.)
TEST_F(EscapeTest, WriteMemoryOfPid1) {
  Sleeper sleeper;
  Attempt host;
  host.args = {"memory", absl::StrCat(sleeper.pid())};
  EXPECT_TRUE(host.escaped(Run(Where::kHost, host)))
      << "negative control: a process of ours could not open the memory of "
         "its sibling";
  sleeper.Stop();
  // Only our sandbox: bwrap's PID 1 drops its capabilities and has memory
  // of its own, so a command there may open it (nothing to gain).
  Attempt inside;
  inside.args = {"memory", "1"};
  RunResult result = Run(Where::kOurs, inside);
  EXPECT_FALSE(inside.escaped(result));
  EXPECT_EQ(result.exit_code, 1)
      << result.Describe() << " " << result.stderr_data;
}

TEST_F(EscapeTest, Mount) {
  RecordProperty("negative_control", "true");  // tools/test_summary.py
  if (::geteuid() != 0) GTEST_SKIP() << "the negative control needs root";
  Attempt attempt;
  attempt.args = {"mount", project_ + "/mnt"};
  ExpectContained("mount", attempt);
}

TEST_F(EscapeTest, NewUserNamespace) {
  Attempt attempt;
  attempt.args = {"userns"};
  ExpectContained("user namespace", attempt);
}

TEST_F(EscapeTest, Tiocsti) {
  Attempt attempt;
  attempt.args = {"tiocsti"};
  ExpectContained("TIOCSTI", attempt);
}

TEST_F(EscapeTest, ConnectToHostLoopbackWithNetworkOff) {
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  struct sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address),
                   sizeof address),
            0);
  ASSERT_EQ(::listen(listener.get(), 16), 0);
  ASSERT_EQ(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address),
                          &length),
            0);
  Attempt attempt;
  attempt.args = {"connect", absl::StrCat(ntohs(address.sin_port))};
  ExpectContained("connect with network off", attempt);
  // With --network the same connect works, in both sandboxes.
  EXPECT_TRUE(attempt.escaped(Run(Where::kOurs, attempt, true)))
      << "connect with --network should work";
  if (!bwrap_.empty()) {
    EXPECT_TRUE(attempt.escaped(Run(Where::kBwrap, attempt, true)));
  }
}

TEST_F(EscapeTest, DeniedPathsCannotBeWrittenOrRead) {
  ExpectContained(".git/hooks write",
                  WriteAttempt(project_ + "/.git/hooks/post-checkout",
                               project_ + "/.git/hooks/post-checkout"));
  ExpectContained(".garuda write",
                  WriteAttempt(project_ + "/.garuda/new.json",
                               project_ + "/.garuda/new.json"));
  for (const std::string& path : {project_ + "/.git/hooks/pre-commit",
                                  project_ + "/.garuda/settings.json"}) {
    Attempt read;
    read.args = {"read", path};
    read.escaped = [](const RunResult& r) {
      return r.stdout_data.find("secret-hook") != std::string::npos ||
             r.stdout_data.find("profile") != std::string::npos;
    };
    ExpectContained(absl::StrCat("read ", path), read);
  }
  Attempt overwrite = WriteAttempt(project_ + "/.git/hooks/pre-commit", "");
  overwrite.reset = [this] {
    ASSERT_TRUE(WriteFileAtomically(project_ + "/.git/hooks/pre-commit",
                                    "secret-hook", 0755)
                    .ok());
  };
  overwrite.escaped = [this](const RunResult&) {
    return *ReadFileToString(project_ + "/.git/hooks/pre-commit") !=
           "secret-hook";
  };
  ExpectContained(".git/hooks overwrite", overwrite);
}

// Issue 13: the secrets' backups and their kin, denied by pattern and by
// the host's own privacy, in both sandboxes (bubblewrap gets the same
// expanded list).
TEST_F(EscapeTest, ReadSecretsUnderEtc) {
  RecordProperty("negative_control", "true");  // tools/test_summary.py
  if (::geteuid() != 0) GTEST_SKIP() << "the negative control needs root";
  int tried = 0;
  for (const char* path : {"/etc/shadow-", "/etc/gshadow-", "/etc/gshadow",
                           "/etc/security/opasswd"}) {
    if (!Exists(path)) continue;
    ++tried;
    Attempt read;
    read.args = {"read", path};
    ExpectContained(absl::StrCat("read ", path), read);
  }
  EXPECT_GT(tried, 0) << "none of the files is on this host";
}

// Issue 13: a setuid file made by open(O_CREAT) with the mode.
TEST_F(EscapeTest, SetuidFileInTheProject) {
  std::string path = project_ + "/setuid";
  Attempt attempt;
  attempt.args = {"setid", "open", path, "4755"};
  attempt.reset = [path] { ::unlink(path.c_str()); };
  ExpectContained("setuid file", attempt);
}

// A process left in the background holds the command's stdout. After the
// run, the pipe must reach end of file: nothing is left holding it.
TEST_F(EscapeTest, BackgroundProcessEndsWithTheCommand) {
  auto run = [&](Where where) {
    int fds[2];
    EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    UniqueFd read_end(fds[0]);
    std::vector<std::string> argv;
    if (where == Where::kOurs) {
      argv = {stager_, "run", "--project", project_, "--mode", "direct", "--"};
    } else if (where == Where::kBwrap) {
      argv = BwrapArgs(false);
    }
    argv.insert(argv.end(), {"/bin/sh", "-c", "sleep 1000 & echo $!"});
    pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(fds[1], 1);
      std::vector<char*> args;
      for (std::string& arg : argv) args.push_back(arg.data());
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << Name(where);
    // Read the printed pid, then see whether the pipe is at end of file.
    std::string text;
    char buffer[64];
    struct pollfd poll_fd = {read_end.get(), POLLIN, 0};
    bool eof = false;
    // The sandbox's case: end of file comes at once, because the kernel has
    // ended the namespace before the supervisor returned. The host's case:
    // the sleep is alive and certainly holds the pipe, so no wait is needed
    // to know it: read what is there without blocking.
    for (;;) {
      int ready = ::poll(&poll_fd, 1, where == Where::kHost ? 0 : 30000);
      if (ready <= 0) break;
      ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
      if (n <= 0) {
        eof = true;
        break;
      }
      text.append(buffer, n);
    }
    if (where == Where::kHost) {
      pid_t sleeper = std::atoi(text.c_str());
      EXPECT_GT(sleeper, 0);
      EXPECT_EQ(::kill(sleeper, 0), 0) << "negative control: alive on host";
      if (sleeper > 0) ::kill(sleeper, SIGKILL);
    }
    return !eof;  // still held: a process survived
  };
  EXPECT_TRUE(run(Where::kHost)) << "negative control";
  EXPECT_FALSE(run(Where::kOurs)) << "a background process survived";
  if (!bwrap_.empty()) {
    EXPECT_FALSE(run(Where::kBwrap));
  }
}

}  // namespace
}  // namespace garuda
