// garuda-auditor and garuda-audit against input that is not what it should
// be: special files where settings, logs and checkpoints belong, a log cut
// while verify reads it, an over-long line, signals while input keeps
// coming, a recomputed chain over invalid UTF-8 (issue 14, points 6 to 11).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "lib/audit/line_format.h"
#include "lib/base/sha256.h"
#include "tests/audit/audit_fixture.h"

namespace garuda {
namespace testing_audit {
namespace {

constexpr int kDeadlineMs = 60000;

// Waits for `pid` to exit, at most kDeadlineMs; its wait status, or -1.
int WaitWithDeadline(pid_t pid) {
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    struct pollfd poll_fd = {pidfd, POLLIN, 0};
    int ready = ::poll(&poll_fd, 1, kDeadlineMs);
    ::close(pidfd);
    if (ready <= 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
      return -1;
    }
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return status;
}

// fork + exec of `argv` with `in` as standard input and `extra_fd` as fd 3
// (when not -1); `env` is added to the environment.
pid_t Start(const std::vector<std::string>& argv, int in, int extra_fd,
            const std::string& env = "") {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  if (in >= 0) ::dup2(in, 0);
  if (extra_fd >= 0) ::dup2(extra_fd, 3);
  int devnull = ::open("/dev/null", O_WRONLY);
  ::dup2(devnull, 1);
  if (!env.empty()) ::putenv(const_cast<char*>(env.c_str()));
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  ::_exit(127);
}

class HostileInputTest : public AuditProgramsTest {
 protected:
  // A log of `count` events of about 200 bytes each; its path.
  std::string BigLog(int count) {
    RunResult run = Append(Events(1, count));
    EXPECT_EQ(run.exit_code, 0) << run.err;
    std::vector<std::string> logs = Logs();
    return logs.empty() ? "" : logs[0];
  }
};

// --- 14.6: special files where settings, policies and logs belong ---

TEST_F(HostileInputTest, AFifoPolicyIsRefusedAtOnce) {
  std::string policy = JoinPath(home_, ".garuda/policy.json");
  ASSERT_TRUE(MakeDirectories(Dirname(policy), 0700).ok());
  ASSERT_EQ(::mkfifo(policy.c_str(), 0600), 0);
  // `timeout` is the deadline: a program that opens the FIFO to read it
  // waits for a writer that never comes.
  RunResult run = Shell(absl::StrCat("timeout 60 ", Quote(Auditor()),
                                     " append --project ", Quote(project_)),
                        Events(1, 1));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr(policy + " is a FIFO (named pipe), not a "
                                          "regular file"));
  // Control: a plain `cat` of the same FIFO hangs until the deadline.
  RunResult cat = Shell(absl::StrCat("timeout 1 cat ", Quote(policy)));
  EXPECT_EQ(cat.exit_code, 124);
}

TEST_F(HostileInputTest, ProjectSettingsLinkedToDevZeroAreRefused) {
  std::string settings = JoinPath(project_, ".garuda/settings.json");
  ASSERT_TRUE(MakeDirectories(Dirname(settings), 0755).ok());
  ASSERT_EQ(::symlink("/dev/zero", settings.c_str()), 0);
  RunResult run = Shell(absl::StrCat("timeout 60 ", Quote(Auditor()),
                                     " append --project ", Quote(project_)),
                        Events(1, 1));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr(settings + " is a symbolic link, not a "
                                            "regular file"));
  // The person's own policy may be a link (dotfile managers), but its
  // target must be a regular file.
  std::string policy = JoinPath(home_, ".garuda/policy.json");
  ASSERT_TRUE(MakeDirectories(Dirname(policy), 0700).ok());
  ASSERT_EQ(::symlink("/dev/zero", policy.c_str()), 0);
  run = Shell(absl::StrCat("timeout 60 ", Quote(Auditor()),
                           " append --project ", Quote(project_)),
              Events(1, 1));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr(policy + " is a character device"));
  // Control: a linked policy with real content is read.
  ::unlink(policy.c_str());
  ::unlink(settings.c_str());
  WriteFile(JoinPath(base_, "real-policy.json"), "{\"audit\": {}}");
  ASSERT_EQ(::symlink(JoinPath(base_, "real-policy.json").c_str(),
                      policy.c_str()),
            0);
  run = Append(Events(1, 1));
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST_F(HostileInputTest, AFifoOrDeviceLogIsUnreadableNotAHang) {
  ASSERT_EQ(Append(Events(1, 1)).exit_code, 0);
  std::string fifo = JoinPath(Folder(), "fifo.jsonl");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string zero = JoinPath(Folder(), "zero.jsonl");
  ASSERT_EQ(::symlink("/dev/zero", zero.c_str()), 0);
  RunResult run = Shell(absl::StrCat("timeout 60 ", Quote(Audit()),
                                     " verify --project ", Quote(project_)));
  EXPECT_EQ(run.exit_code, 2) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("/fifo: unreadable: " + fifo +
                                 " is a FIFO (named pipe)"));
  EXPECT_THAT(run.out, HasSubstr("/zero: unreadable: " + zero +
                                 " is a symbolic link"));
  // Control: the real log beside them verifies.
  EXPECT_THAT(run.out, HasSubstr(": ok: 2 lines, last seq 2, closed"));
}

// --- 14.7: nothing of a link's target, no raw bytes on the terminal ---

TEST_F(HostileInputTest, ACheckpointLinkedToPasswdPrintsNothingOfIt) {
  Policy("{\"checkpoint\": true}");
  ASSERT_EQ(Append(Events(1, 1)).exit_code, 0);
  std::string checkpoint = CheckpointOf(Logs()[0]);
  // Control: the target holds text that would show ("root:").
  ASSERT_THAT(ReadFile("/etc/passwd"), HasSubstr("root:"));
  ASSERT_EQ(::unlink(checkpoint.c_str()), 0);
  ASSERT_EQ(::symlink("/etc/passwd", checkpoint.c_str()), 0);
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("checkpoint_mismatch: the checkpoint is not "
                                 "valid: " + checkpoint +
                                 " is a symbolic link"));
  EXPECT_THAT(run.out + run.err, Not(HasSubstr("root:")));
}

TEST_F(HostileInputTest, ControlBytesOfAFileReachTheTerminalOnlyAsMarks) {
  Policy("{\"checkpoint\": true}");
  ASSERT_EQ(Append(Events(1, 1)).exit_code, 0);
  std::string checkpoint = CheckpointOf(Logs()[0]);
  // A checkpoint whose parse error would quote an escape sequence (set the
  // title, clear the screen), and one that names another log with one.
  WriteFile(checkpoint, "{\"\\u001b]0;owned\\u0007\\u001b[2J\": 1}");
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out, HasSubstr("checkpoint_mismatch"));
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find('\x07'), std::string::npos) << run.out;
  EXPECT_THAT(run.out, HasSubstr("\\e]0;owned"));
  // Raw bytes are named; the message's "\n" hint is not doubled on the way.
  WriteFile(checkpoint, "{\"\x1b[2J\": 1}");
  run = Verify();
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << run.out;
  EXPECT_THAT(run.out, HasSubstr("write a line break as \\n,"));
  WriteFile(checkpoint,
            "{\"log\": \"x\\u001b[2J\", \"seq\": \"1\", \"hash\": \"" +
                std::string(64, 'a') + "\"}");
  run = Verify();
  EXPECT_THAT(run.out, HasSubstr("names log \"x\\e[2J\""));
  EXPECT_EQ(run.out.find('\x1b'), std::string::npos) << run.out;
  // And an event line refused by append shows its bytes the same way.
  run = Append("{\"kind\":\"x\",\"\x1b[2Jbad\":1}\n");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("refused standard input line 1"));
  EXPECT_EQ(run.err.find('\x1b'), std::string::npos) << run.err;
}

// --- 14.8: a log cut while verify reads it ---

TEST_F(HostileInputTest, ALogCutDuringVerifyIsAFindingNotACrash) {
  // Several MiB: verify reads it in pieces of about 2 MiB.
  std::string log = BigLog(40000);
  ASSERT_FALSE(log.empty());
  struct stat st;
  ASSERT_EQ(::stat(log.c_str(), &st), 0);
  ASSERT_GT(st.st_size, 6 << 20);

  for (bool cut : {false, true}) {
    SCOPED_TRACE(cut ? "cut" : "control: not cut");
    int pair[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
    int out[2];
    ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::dup2(pair[1], 3);
      ::dup2(out[1], 1);
      ::setenv("GARUDA_TEST_ONLY_VERIFY_PAUSE_FD", "3", 1);
      std::string audit = Audit();
      ::execl(audit.c_str(), audit.c_str(), "verify", "--project",
              project_.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(pair[1]);
    ::close(out[1]);
    // The handshake: verify has read the first piece of the log and waits.
    struct pollfd ready = {pair[0], POLLIN, 0};
    ASSERT_EQ(::poll(&ready, 1, kDeadlineMs), 1);
    char path[4096];
    ssize_t n = ::read(pair[0], path, sizeof(path));
    ASSERT_GT(n, 0);
    EXPECT_EQ(std::string(path, n), log + "\n");
    // While it waits it is locked down (negative control: this process).
    std::string child = absl::StrCat(pid);
    EXPECT_EQ(ProcStatus(child, "NoNewPrivs"), "1");
    EXPECT_EQ(ProcStatus(child, "Seccomp"), "2");
    EXPECT_EQ(ProcStatus("self", "NoNewPrivs"), "0");
    if (cut) ASSERT_EQ(::truncate(log.c_str(), st.st_size / 3), 0);
    ASSERT_EQ(::write(pair[0], "g", 1), 1);
    std::string printed;
    char buffer[4096];
    while ((n = ::read(out[0], buffer, sizeof(buffer))) > 0) {
      printed.append(buffer, n);
    }
    int status = WaitWithDeadline(pid);
    ::close(pair[0]);
    ::close(out[0]);
    ASSERT_TRUE(WIFEXITED(status)) << "verify died: " << status;
    if (cut) {
      EXPECT_EQ(WEXITSTATUS(status), 1) << printed;
      EXPECT_THAT(printed, HasSubstr(": cut: the log shrank while it was read: " +
                                     absl::StrCat(st.st_size) +
                                     " bytes when opened, " +
                                     absl::StrCat(st.st_size / 3) + " now"));
    } else {
      EXPECT_EQ(WEXITSTATUS(status), 0) << printed;
      EXPECT_THAT(printed, HasSubstr(": ok: 40001 lines"));
    }
  }
}

// The class of crash this replaces: a mapped log that shrinks under its
// reader raises SIGBUS on the next page touched (shown in a child).
TEST_F(HostileInputTest, ControlAMappedLogCutUnderItsReaderIsSigbus) {
  std::string path = JoinPath(base_, "mapped.jsonl");
  WriteFile(path, std::string(1 << 20, 'x'));
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int fd = ::open(path.c_str(), O_RDONLY);
    void* data = ::mmap(nullptr, 1 << 20, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) ::_exit(3);
    if (::truncate(path.c_str(), 4096) != 0) ::_exit(4);
    volatile char c = static_cast<const char*>(data)[(1 << 20) - 1];
    (void)c;
    ::_exit(0);
  }
  int status = WaitWithDeadline(pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << status;
  EXPECT_EQ(WTERMSIG(status), SIGBUS);
}

// --- 14.9: an over-long line is refused alone ---

TEST_F(HostileInputTest, AnOverLongLineIsRefusedAndTheLinesAroundItWritten) {
  std::string long_line =
      "{\"kind\":\"command\",\"target\":\"" +
      std::string(kMaxAuditLineBytes + (1 << 20), 'L') + "\"}\n";
  RunResult run =
      Append(Events(1, 2) + long_line + Events(3, 2) + long_line + Events(5, 1));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr("refused standard input line 3: longer than " +
                                 absl::StrCat(kMaxAuditLineBytes) + " bytes"));
  EXPECT_THAT(run.err, HasSubstr("refused standard input line 6: longer than"));
  EXPECT_THAT(run.out, HasSubstr("5 appended, 2 refused (lines 3, 6)"));
  // The five others are in the log, in order; nothing of the long ones.
  std::string text = ReadFile(Logs()[0]);
  EXPECT_EQ(text.find("LLLL"), std::string::npos);
  size_t last = 0;
  for (int i = 1; i <= 5; ++i) {
    size_t at = text.find(absl::StrCat("rm -rf build", i, "\""));
    ASSERT_NE(at, std::string::npos) << i;
    EXPECT_GT(at, last);
    last = at;
  }
  EXPECT_THAT(Verify().out, HasSubstr("ok: 6 lines, last seq 6, closed"));
  // Control: the same lines without the long ones, nothing refused.
  ::unlink(Logs()[0].c_str());
  run = Append(Events(1, 5));
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_THAT(run.out, HasSubstr("5 appended, 0 refused"));
}

// --- 14.10: signals while input keeps coming ---

TEST_F(HostileInputTest, SignalsEndAppendWhileInputKeepsComing) {
  // The feeder's write after the auditor ends must fail, not kill the test.
  ::signal(SIGPIPE, SIG_IGN);
  for (int signal_number : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(signal_number);
    for (const std::string& log : Logs()) ::unlink(log.c_str());
    int input[2];
    ASSERT_EQ(::pipe2(input, O_CLOEXEC), 0);
    pid_t pid = Start({Auditor(), "append", "--project", project_}, input[0],
                      -1);
    ASSERT_GE(pid, 0);
    ::close(input[0]);
    // Input that never stops: the pipe is kept full until the auditor ends.
    std::atomic<bool> done{false};
    std::thread feeder([&] {
      std::string events = Events(1, 200);
      while (!done.load()) {
        if (::write(input[1], events.data(), events.size()) < 0) break;
      }
    });
    absl::Time give_up = absl::Now() + absl::Seconds(60);
    auto lines = [&] {
      std::vector<std::string> logs = Logs();
      if (logs.empty()) return size_t{0};
      std::string text = ReadFile(logs[0]);
      return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    };
    while (lines() < 1000 && absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    ASSERT_GE(lines(), 1000u);
    ASSERT_EQ(::kill(pid, signal_number), 0);
    int status = WaitWithDeadline(pid);
    done.store(true);
    ::close(input[1]);  // the feeder's write fails with EPIPE
    feeder.join();
    ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
    EXPECT_EQ(WEXITSTATUS(status), 130);
    RunResult run = Verify();
    EXPECT_EQ(run.exit_code, 0) << run.out;
    EXPECT_THAT(run.out, HasSubstr(", closed"));
  }
}

std::atomic<bool> handled{false};
void OnTerm(int) { handled.store(true); }

// The class of bug this replaces: ppoll that lets a pending SIGTERM in while
// it waits returns at once when input is ready, and restores the mask
// without running the handler; with input always ready it never runs.
TEST_F(HostileInputTest, ControlPpollWithReadyInputKeepsASignalOut) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    struct sigaction action = {};
    action.sa_handler = OnTerm;
    ::sigaction(SIGTERM, &action, nullptr);
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    ::sigprocmask(SIG_BLOCK, &term, nullptr);
    int data[2];
    if (::pipe(data) != 0 || ::write(data[1], "x", 1) != 1) ::_exit(3);
    ::raise(SIGTERM);  // pending, blocked
    sigset_t wait_mask;
    ::sigprocmask(SIG_SETMASK, nullptr, &wait_mask);
    sigdelset(&wait_mask, SIGTERM);
    for (int i = 0; i < 1000; ++i) {
      struct pollfd poll_fd = {data[0], POLLIN, 0};
      if (::ppoll(&poll_fd, 1, nullptr, &wait_mask) != 1) ::_exit(4);
    }
    ::_exit(handled.load() ? 5 : 0);  // 0: the signal never came in
  }
  int status = WaitWithDeadline(pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// --- 14.11: invalid UTF-8 under a recomputed chain ---

TEST_F(HostileInputTest, ARechainedLogWithInvalidUtf8DoesNotVerify) {
  ASSERT_EQ(Append(Events(1, 3)).exit_code, 0);
  std::string log = Logs()[0];
  std::string name = Basename(log);
  name = name.substr(0, name.size() - 6);
  // Control: a rechained change of valid text verifies (the rewrite is
  // complete, only what it writes can be found).
  RewriteAndRechain(log, name, "build2", "build9");
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("ok: 4 lines"));
  // A lone continuation byte, an overlong '/', a surrogate: never verify.
  for (const std::string bad : {"\x80", "\xc0\xaf", "\xed\xa0\x80"}) {
    RewriteAndRechain(log, name, "build9", "build" + bad);
    run = Verify();
    EXPECT_EQ(run.exit_code, 1) << run.out;
    EXPECT_THAT(run.out, HasSubstr("line 2 (seq 2 expected) is not valid "
                                   "UTF-8, which the canonical form never "
                                   "holds: modified"));
    RewriteAndRechain(log, name, "build" + bad, "build9");
    ASSERT_EQ(Verify().exit_code, 0);
  }
  // An escape the writer never writes (\u0041 for "A"): not canonical.
  RewriteAndRechain(log, name, "build9", "build\\u0041");
  run = Verify();
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("not in the canonical form"));
}

}  // namespace
}  // namespace testing_audit
}  // namespace garuda
