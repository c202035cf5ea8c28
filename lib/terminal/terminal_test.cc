#include "lib/terminal/terminal.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"

namespace garuda {
namespace terminal {
namespace {

using agent::CommandProgress;
using agent::ToolCallView;
using agent::ToolOutcomeView;
using terminal_internal::TerminalSafe;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr absl::Duration kDeadline = absl::Seconds(20);

// Reads from `fd` into `seen` until it holds `needle` (true) or the
// deadline passes (false).
bool WaitFor(int fd, std::string* seen, absl::string_view needle,
             size_t from = 0) {
  absl::Time deadline = absl::Now() + kDeadline;
  while (seen->find(std::string(needle), from) == std::string::npos) {
    int left =
        static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (left <= 0) return false;
    struct pollfd pfd = {fd, POLLIN, 0};
    if (poll(&pfd, 1, left) <= 0) continue;
    char buffer[4096];
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n <= 0)
      return seen->find(std::string(needle), from) != std::string::npos;
    seen->append(buffer, static_cast<size_t>(n));
  }
  return true;
}

// ---------------------------------------------------------------------------

TEST(TerminalSafeTest, MarksWhatATerminalWouldInterpret) {
  EXPECT_EQ(TerminalSafe("plain\ttext\nnext line\n"),
            "plain\ttext\nnext line\n");
  EXPECT_EQ(TerminalSafe("clear\x1b[2Jscreen"), "clear\\e[2Jscreen");
  std::string marked = TerminalSafe("clear\x1b[2Jscreen\r");
  EXPECT_THAT(marked, Not(HasSubstr("\x1b")));
  EXPECT_THAT(marked, Not(HasSubstr("\r")));
  EXPECT_THAT(marked, HasSubstr("[2Jscreen"));
  // A right-to-left override and a zero-width space.
  EXPECT_EQ(TerminalSafe("a\u202eb\u200bc"), "a<U+202E>b<U+200B>c");
  // Backslashes stay single: text lib/question made visible passes as is.
  EXPECT_EQ(TerminalSafe("path\\x1b and \\\\"), "path\\x1b and \\\\");
  EXPECT_EQ(TerminalSafe("caf\xc3\xa9"), "caf\xc3\xa9");
}

// ---------------------------------------------------------------------------
// The Interaction, over pipes.

class InteractionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int in[2], out[2];
    ASSERT_EQ(pipe2(in, O_CLOEXEC), 0);
    ASSERT_EQ(pipe2(out, O_CLOEXEC), 0);
    in_read_ = UniqueFd(in[0]);
    in_write_ = UniqueFd(in[1]);
    out_read_ = UniqueFd(out[0]);
    out_write_ = UniqueFd(out[1]);
    ASSERT_EQ(fcntl(out_read_.get(), F_SETFL, O_NONBLOCK), 0);
    interaction_ = MakeTerminalInteraction(in_read_.get(), out_write_.get());
  }

  std::string Output() {
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = read(out_read_.get(), buffer, sizeof(buffer))) > 0) {
      out.append(buffer, static_cast<size_t>(n));
    }
    return out;
  }

  void Type(absl::string_view text) {
    ASSERT_TRUE(WriteAll(in_write_.get(), text).ok());
  }

  PermissionQuestion Question() {
    PermissionQuestion question;
    question.tool = "bash";
    question.summary = "Run on the host: rm -rf build";
    question.detail = "no sandbox on this machine";
    question.session_rule = "bash(rm -rf build)";
    return question;
  }

  UniqueFd in_read_, in_write_, out_read_, out_write_;
  std::unique_ptr<Interaction> interaction_;
};

TEST_F(InteractionTest, StreamedTextIsShownAsItArrivesAndMadeVisible) {
  EXPECT_FALSE(interaction_->CanAsk());  // a pipe is not a terminal
  interaction_->ShowText("caf\xc3");     // "é" cut in two pieces
  EXPECT_EQ(Output(), "caf");
  interaction_->ShowText("\xa9 \x1b]0;owned\x07 done");
  std::string shown = Output();
  EXPECT_THAT(shown, HasSubstr("\xc3\xa9 "));
  EXPECT_THAT(shown, Not(HasSubstr("\x1b")));
  EXPECT_THAT(shown, Not(HasSubstr("\x07")));
  EXPECT_THAT(shown, HasSubstr("]0;owned"));

  // A tool call starts on its own line; no colours on a pipe.
  interaction_->ShowToolCall({"1", "bash", "bash: make\x1b[31m test"});
  interaction_->ShowToolOutcome(
      {"1", "bash", "exited with code 2\nmore", true});
  std::string lines = Output();
  EXPECT_THAT(lines, ::testing::StartsWith("\n-> bash: make"));
  EXPECT_THAT(lines, Not(HasSubstr("\x1b")));
  EXPECT_THAT(lines, HasSubstr("error: exited with code 2 ...\n"));

  interaction_->ShowRetry("HTTP 529 overloaded");
  EXPECT_THAT(Output(), HasSubstr("[retrying: HTTP 529 overloaded; the text "
                                  "above is void]\n"));
  interaction_->ShowNotice("model: none\x1b[8m configured");
  EXPECT_THAT(Output(), Not(HasSubstr("\x1b")));
}

TEST_F(InteractionTest, PermissionAnswers) {
  Type("y\n");
  EXPECT_EQ(interaction_->AskPermission(Question()), PermissionAnswer::kYes);
  std::string shown = Output();
  EXPECT_THAT(shown, HasSubstr("Permission needed (bash): Run on the host: "
                               "rm -rf build\nno sandbox on this machine\n"));
  EXPECT_THAT(shown, HasSubstr("s  yes, and don't ask again this session for "
                               "bash(rm -rf build)"));
  EXPECT_THAT(shown, HasSubstr("Allowed.\n"));

  Type("s\n");  // one key per meaning for every question (lib/question)
  EXPECT_EQ(interaction_->AskPermission(Question()),
            PermissionAnswer::kYesForSession);
  Type("maybe\nno\n");
  EXPECT_EQ(interaction_->AskPermission(Question()), PermissionAnswer::kNo);
  EXPECT_THAT(Output(), HasSubstr("Not allowed.\n"));

  // Without a session rule "s" is not an answer; the end of input is "no".
  PermissionQuestion no_rule = Question();
  no_rule.session_rule.reset();
  Type("s\n");
  in_write_.Reset();
  EXPECT_EQ(interaction_->AskPermission(no_rule), PermissionAnswer::kNo);
  EXPECT_THAT(Output(), Not(HasSubstr("don't ask again")));
}

TEST_F(InteractionTest, CtrlCAtThePermissionQuestionIsNo) {
  // Negative control first: the answer "y" is taken.
  Type("y\n");
  ASSERT_EQ(interaction_->AskPermission(Question()), PermissionAnswer::kYes);
  Output();

  // Nothing typed; Ctrl-C once the question waits.
  std::thread interrupter([this] {
    std::string seen;
    int fd = dup(out_read_.get());
    ASSERT_EQ(fcntl(fd, F_SETFL, 0), 0);
    if (WaitFor(fd, &seen, "Allow?")) kill(getpid(), SIGINT);
    close(fd);
  });
  EXPECT_EQ(interaction_->AskPermission(Question()), PermissionAnswer::kNo);
  interrupter.join();
}

// ---------------------------------------------------------------------------
// The LineSource on a pty that is the controlling terminal of a child, so
// that Ctrl-C typed on it is a real SIGINT from the line discipline.

struct PtyChild {
  pid_t pid = -1;
  UniqueFd master;
  UniqueFd slave;    // the parent's copy, to read the terminal's settings
  UniqueFd results;  // one line per ReadLine: "line:<text>", "eof"...
  UniqueFd go;       // a byte lets a child that holds go on
  std::string screen, reported;
  struct termios initial = {};  // the pty's settings before the child ran

  bool Screen(absl::string_view needle) {
    return WaitFor(master.get(), &screen, needle);
  }
  bool Reported(absl::string_view needle) {
    return WaitFor(results.get(), &reported, needle);
  }
  void Type(absl::string_view keys) {
    ASSERT_TRUE(WriteAll(master.get(), keys).ok());
  }
  int Wait() {
    int status = 0;
    if (pid > 0) waitpid(pid, &status, 0);
    pid = -1;
    return status;
  }
  ~PtyChild() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

// The child: prompts "p1> ", "p2> "... and reports each answer; after the
// line "work" it acts out a request in flight until Ctrl-C cancels it.
// After the line "hold" it waits for a byte on `go`, out of ReadLine.
// With `job_control`, the line source runs in a process group of its own
// under the session leader, as a shell's job does (a stop signal from the
// terminal is ignored in an orphaned group); it reports "pid:<n>" first.
void RunChild(int slave, int report, int go, const std::string& history,
              bool job_control) {
  struct rlimit no_core = {0, 0};  // the crash test leaves no core file
  setrlimit(RLIMIT_CORE, &no_core);
  setsid();
  ioctl(slave, TIOCSCTTY, 0);
  if (job_control) {
    pid_t job = fork();
    if (job > 0) {
      int status;
      while (waitpid(job, &status, 0) < 0 && errno == EINTR) {
      }
      _exit(0);
    }
    setpgid(0, 0);
    signal(SIGTTOU, SIG_IGN);
    tcsetpgrp(slave, getpid());
    signal(SIGTTOU, SIG_DFL);
    (void)WriteAll(report, absl::StrCat("pid:", getpid(), "\n"));
  }
  CancelFlag cancel;
  std::unique_ptr<LineSource> source =
      terminal_internal::MakeTerminalLineSourceOn(slave, slave, history,
                                                  &cancel);
  auto say = [&](const std::string& line) {
    (void)WriteAll(report, line + "\n");
  };
  for (int i = 1; i < 50; ++i) {
    std::optional<std::string> line =
        source->ReadLine(absl::StrCat("p", i, "> "));
    if (!line) {
      say("eof");
      break;
    }
    say("line:" + *line);
    // What the session prints next (an answer, a command's line) goes to
    // the terminal right after the line.
    if (*line == "answer") (void)WriteAll(slave, "ANSWER\n");
    if (*line == "hold") {
      char byte;
      (void)!read(go, &byte, 1);
    }
    if (*line == "work") {
      absl::Time deadline = absl::Now() + kDeadline;
      while (!cancel.cancelled() && absl::Now() < deadline) {
        poll(nullptr, 0, 10);
      }
      say(cancel.cancelled() ? "cancelled" : "not-cancelled");
    }
  }
  source.reset();
  _exit(0);
}

std::unique_ptr<PtyChild> StartChild(const std::string& history,
                                     bool job_control = false) {
  auto child = std::make_unique<PtyChild>();
  int master = -1, slave = -1;
  struct winsize size = {24, 100, 0, 0};
  if (openpty(&master, &slave, nullptr, nullptr, &size) != 0) return nullptr;
  // The settings before the child runs: once it runs, its editor may
  // change them at any moment.
  if (tcgetattr(slave, &child->initial) != 0) return nullptr;
  int report[2], go[2];
  if (pipe2(report, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) {
    return nullptr;
  }
  pid_t pid = fork();
  if (pid == 0) {
    close(master);
    close(report[0]);
    close(go[1]);
    RunChild(slave, report[1], go[0], history, job_control);
  }
  close(report[1]);
  close(go[0]);
  child->go = UniqueFd(go[1]);
  child->pid = pid;
  child->master = UniqueFd(master);
  child->slave = UniqueFd(slave);
  child->results = UniqueFd(report[0]);
  return child;
}

std::string HistoryPath() {
  static int counter = 0;
  return JoinPath(getenv("TEST_TMPDIR"),
                  absl::StrCat("history-", getpid(), "-", counter++));
}

TEST(LineSourceTest, LinesHistoryAndEndOfInput) {
  const std::string history = HistoryPath();
  std::unique_ptr<PtyChild> child = StartChild(history);
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->Screen("p1> "));
  child->Type("first line\r");
  ASSERT_TRUE(child->Reported("line:first line\n"));
  ASSERT_TRUE(child->Screen("p2> "));
  child->Type(" secret\r");  // a leading space: not kept
  ASSERT_TRUE(child->Reported("line: secret\n"));
  ASSERT_TRUE(child->Screen("p3> "));
  child->Type("caf\xc3\xa9 \\ back\r");
  ASSERT_TRUE(child->Reported("line:caf\xc3\xa9 \\ back\n"));
  ASSERT_TRUE(child->Screen("p4> "));
  child->Type("\x04");  // Ctrl-D at an empty line
  ASSERT_TRUE(child->Reported("eof\n"));
  child->Wait();

  absl::StatusOr<std::string> kept = ReadFileToString(history);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_EQ(*kept, "first line\ncaf\xc3\xa9 \\\\ back\n");
  struct stat info;
  ASSERT_EQ(stat(history.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);

  // A new session finds the lines again with the up arrow.
  child = StartChild(history);
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->Screen("p1> "));
  child->Type("\x1b[A\x1b[A\r");
  ASSERT_TRUE(child->Reported("line:first line\n"));
}

// The model's answer starts on a line of its own after the person's Enter,
// wherever the cursor was in the line (before: "> please fix the typoLet me
// look ...").
TEST(LineSourceTest, WhatFollowsEnterStartsOnANewLine) {
  std::unique_ptr<PtyChild> child = StartChild("");
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->Screen("p1> "));
  child->Type("answer\r");
  ASSERT_TRUE(child->Reported("line:answer\n"));
  ASSERT_TRUE(child->Screen("ANSWER"));
  size_t answer = child->screen.find("ANSWER");
  size_t typed = child->screen.rfind("answer", answer);
  ASSERT_NE(typed, std::string::npos) << child->screen;
  EXPECT_NE(child->screen.substr(typed, answer - typed).find('\n'),
            std::string::npos)
      << child->screen;
  // The cursor moved back into the line before Enter: the same.
  ASSERT_TRUE(child->Screen("p2> "));
  const size_t from = child->screen.size();
  child->Type("answer\x1b[D\x1b[D\x1b[D\r");
  ASSERT_TRUE(child->Reported("line:answer\nline:answer\n"));
  ASSERT_TRUE(WaitFor(child->master.get(), &child->screen, "ANSWER", from));
  answer = child->screen.find("ANSWER", from);
  std::string between = child->screen.substr(from, answer - from);
  ASSERT_NE(between.find("answer"), std::string::npos) << between;
  EXPECT_NE(between.find('\n', between.rfind("answer")), std::string::npos)
      << between;
  // The prompt that follows is drawn on a line of its own too.
  ASSERT_TRUE(child->Screen("p3> "));
  const size_t prompt = child->screen.find("p3> ", answer);
  EXPECT_NE(child->screen.substr(answer, prompt - answer).find('\n'),
            std::string::npos);
}

TEST(LineSourceTest, CtrlCClearsALineThenLeavesOnTheSecond) {
  std::unique_ptr<PtyChild> child = StartChild("");
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->Screen("p1> "));
  child->Type("half typed");
  ASSERT_TRUE(child->Screen("half typed"));
  child->Type("\x03");  // clears the line, does not leave
  size_t mark = child->screen.size();
  ASSERT_TRUE(WaitFor(child->master.get(), &child->screen, "p1> ", mark));
  child->Type("kept\r");
  ASSERT_TRUE(child->Reported("line:kept\n"));
  EXPECT_THAT(child->reported, Not(HasSubstr("half typed")));

  ASSERT_TRUE(child->Screen("p2> "));
  EXPECT_THAT(child->screen, Not(HasSubstr("Ctrl-C again")));
  mark = child->screen.size();
  child->Type("\x03");  // an empty prompt: a hint
  ASSERT_TRUE(WaitFor(child->master.get(), &child->screen,
                      "Ctrl-C again to leave", mark));
  EXPECT_THAT(child->reported, Not(HasSubstr("eof")));
  child->Type("\x03");  // the second leaves
  ASSERT_TRUE(child->Reported("eof\n")) << absl::CEscape(child->screen) << "\n"
                                        << absl::CEscape(child->reported);
  EXPECT_TRUE(WIFEXITED(child->Wait()));
}

TEST(LineSourceTest, CtrlCInFlightCancelsAndTheNextOneLeaves) {
  std::unique_ptr<PtyChild> child = StartChild("");
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->Screen("p1> "));
  child->Type("work\r");
  ASSERT_TRUE(child->Reported("line:work\n"));
  child->Type("\x03");  // the request in flight
  ASSERT_TRUE(child->Reported("cancelled\n"));
  ASSERT_TRUE(child->Screen("p2> "));  // the prompt comes back
  child->Type("\x03");                 // a second Ctrl-C at the prompt
  ASSERT_TRUE(child->Reported("eof\n"));
}

TEST(LineSourceTest, TerminalSettingsAreRestored) {
  std::unique_ptr<PtyChild> child = StartChild("");
  ASSERT_NE(child, nullptr);
  struct termios before;
  ASSERT_EQ(tcgetattr(child->slave.get(), &before), 0);
  ASSERT_TRUE(before.c_lflag & ICANON);
  ASSERT_TRUE(child->Screen("p1> "));
  // While the line is edited the terminal is in libedit's mode (the restore
  // below has something to undo).
  struct termios during;
  ASSERT_EQ(tcgetattr(child->slave.get(), &during), 0);
  EXPECT_FALSE(during.c_lflag & ICANON);
  child->Type("hold\r");
  ASSERT_TRUE(child->Reported("line:hold\n"));  // out of ReadLine, held
  struct termios after_line;
  ASSERT_EQ(tcgetattr(child->slave.get(), &after_line), 0);
  EXPECT_TRUE(after_line.c_lflag & ICANON);
  EXPECT_TRUE(after_line.c_lflag & ECHO);
  ASSERT_TRUE(WriteAll(child->go.get(), "g").ok());

  // SIGTERM in the middle of editing a line.
  ASSERT_TRUE(child->Screen("p2> "));
  child->Type("abc");
  ASSERT_TRUE(child->Screen("abc"));
  ASSERT_EQ(tcgetattr(child->slave.get(), &during), 0);
  EXPECT_FALSE(during.c_lflag & ICANON);
  kill(child->pid, SIGTERM);
  int status = child->Wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  struct termios after_kill;
  ASSERT_EQ(tcgetattr(child->slave.get(), &after_kill), 0);
  EXPECT_EQ(after_kill.c_lflag, before.c_lflag);
  EXPECT_EQ(after_kill.c_iflag, before.c_iflag);
  EXPECT_EQ(after_kill.c_oflag, before.c_oflag);
}

TEST(LineSourceTest, AResizedWindowRedrawsTheLine) {
  std::unique_ptr<PtyChild> child = StartChild("");
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->Screen("p1> "));
  child->Type("half");
  ASSERT_TRUE(child->Screen("half"));
  size_t mark = child->screen.size();
  struct winsize narrow = {30, 60, 0, 0};
  ASSERT_EQ(ioctl(child->master.get(), TIOCSWINSZ, &narrow), 0);  // SIGWINCH
  ASSERT_TRUE(WaitFor(child->master.get(), &child->screen, "p1> half", mark));
  child->Type(" done\r");
  ASSERT_TRUE(child->Reported("line:half done\n"));
}

TEST(LineSourceTest, ACrashDuringALineRestoresTheTerminal) {
  std::unique_ptr<PtyChild> child = StartChild("");
  ASSERT_NE(child, nullptr);
  const struct termios before = child->initial;
  ASSERT_TRUE(child->Screen("p1> "));
  child->Type("abc");
  ASSERT_TRUE(child->Screen("abc"));
  kill(child->pid, SIGABRT);
  int status = child->Wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
  struct termios after;
  ASSERT_EQ(tcgetattr(child->slave.get(), &after), 0);
  EXPECT_EQ(after.c_lflag, before.c_lflag);
  EXPECT_EQ(after.c_iflag, before.c_iflag);
}

// The state letter of /proc/<pid>/stat ('T': stopped), '?' when gone.
char ProcessState(pid_t pid) {
  absl::StatusOr<std::string> stat =
      ReadFileToString(absl::StrCat("/proc/", pid, "/stat"));
  if (!stat.ok()) return '?';
  size_t end = stat->rfind(')');
  return end != std::string::npos && end + 2 < stat->size() ? (*stat)[end + 2]
                                                            : '?';
}

// Polls until `done` or the deadline.
bool Eventually(const std::function<bool()>& done) {
  absl::Time deadline = absl::Now() + kDeadline;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    poll(nullptr, 0, 10);
  }
  return true;
}

TEST(LineSourceTest, CtrlZGivesTheShellItsTerminalAndComesBack) {
  std::unique_ptr<PtyChild> child = StartChild("", /*job_control=*/true);
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->Reported("\n"));
  pid_t job = 0;
  ASSERT_TRUE(absl::SimpleAtoi(
      absl::StripSuffix(absl::StripPrefix(child->reported, "pid:"), "\n"),
      &job));
  const struct termios before = child->initial;
  ASSERT_TRUE(child->Screen("p1> "));
  child->Type("half");
  ASSERT_TRUE(child->Screen("half"));
  auto canonical = [&] {
    struct termios now;
    return tcgetattr(child->slave.get(), &now) == 0 &&
           (now.c_lflag & ICANON) != 0;
  };
  EXPECT_FALSE(canonical());  // the editor's mode

  child->Type("\x1a");  // Ctrl-Z
  ASSERT_TRUE(Eventually([&] { return ProcessState(job) == 'T'; }));
  // Stopped: the terminal is in the settings it had before the prompt.
  struct termios stopped;
  ASSERT_EQ(tcgetattr(child->slave.get(), &stopped), 0);
  EXPECT_EQ(stopped.c_lflag, before.c_lflag);
  EXPECT_EQ(stopped.c_iflag, before.c_iflag);

  // Continued (as `fg` does): the editor takes the terminal again and the
  // line typed before goes on.
  ASSERT_EQ(kill(job, SIGCONT), 0);
  ASSERT_TRUE(Eventually([&] { return !canonical(); }));
  child->Type(" done\r");
  ASSERT_TRUE(child->Reported("line:half done\n"));
  kill(job, SIGKILL);
}

TEST(LineSourceTest, ThePromptIsMadeVisible) {
  int master = -1, slave = -1;
  ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  UniqueFd master_fd(master), slave_fd(slave);
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    ioctl(slave, TIOCSCTTY, 0);
    auto source =
        terminal_internal::MakeTerminalLineSourceOn(slave, slave, "", nullptr);
    source->ReadLine("evil\x1b[2J> ");
    _exit(0);
  }
  std::string screen;
  ASSERT_TRUE(WaitFor(master, &screen, "[2J> "));
  EXPECT_THAT(screen, Not(HasSubstr("evil\x1b[2J")));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

// ---------------------------------------------------------------------------
// Multi-line input: a bracketed paste is one line, with its line breaks;
// Alt-Enter and a final backslash make a line break too.

TEST(LineSourceTest, APasteIsOneLineWithItsLineBreaks) {
  const std::string history = HistoryPath();
  ::setenv("TERM", "xterm", 1);  // a terminal that marks pastes
  std::unique_ptr<PtyChild> child = StartChild(history);
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->Screen("p1> "));
  // The editor asked the terminal to mark pastes.
  EXPECT_THAT(child->screen, HasSubstr("\x1b[?2004h"));
  child->Type("\x1b[200~line one\nline two\r\tthree\x1b[201~\r");
  ASSERT_TRUE(child->Reported("line:line one\nline two\n\tthree\n"))
      << absl::CEscape(child->reported) << " screen "
      << absl::CEscape(child->screen);
  // Negative control: the same text typed without the marks is three
  // lines, the first taken at its line end.
  ASSERT_TRUE(child->Screen("p2> "));
  child->Type("line one\nline two\r");
  ASSERT_TRUE(child->Reported("line:line one\n"));
  ASSERT_TRUE(child->Reported("line:line two\n"));
  ASSERT_TRUE(child->Screen("p4> "));
  child->Type("\x04");
  ASSERT_TRUE(child->Reported("eof\n"));
  child->Wait();
  // The history keeps the paste as one entry.
  absl::StatusOr<std::string> kept = ReadFileToString(history);
  ASSERT_TRUE(kept.ok());
  EXPECT_THAT(*kept, HasSubstr("line one\\nline two\\n\tthree\n"));
}

TEST(LineSourceTest, AltEnterAndAFinalBackslashBreakTheLine) {
  std::unique_ptr<PtyChild> child = StartChild("");
  ASSERT_NE(child, nullptr);
  ASSERT_TRUE(child->Screen("p1> "));
  child->Type("first\x1b\rsecond\\\rthird\r");
  ASSERT_TRUE(child->Reported("line:first\nsecond\nthird\n"));
  // A backslash inside the line is kept, and Enter takes the line.
  ASSERT_TRUE(child->Screen("p2> "));
  child->Type("a \\ b\r");
  ASSERT_TRUE(child->Reported("line:a \\ b\n"));
}

// ---------------------------------------------------------------------------
// The Interaction on a terminal that takes colours (a pty).

class ColorInteractionTest : public ::testing::Test {
 protected:
  void Start(bool plain) {
    ::setenv("TERM", "xterm", 1);
    ::unsetenv("NO_COLOR");
    int master = -1, slave = -1;
    struct winsize size = {24, 100, 0, 0};
    ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, &size), 0);
    master_ = UniqueFd(master);
    slave_ = UniqueFd(slave);
    // Raw: what the interaction writes reaches the master unchanged.
    struct termios raw;
    ASSERT_EQ(tcgetattr(slave, &raw), 0);
    cfmakeraw(&raw);
    ASSERT_EQ(tcsetattr(slave, TCSANOW, &raw), 0);
    interaction_ = MakeTerminalInteraction(slave, slave, plain);
  }
  // Everything written so far (the pty's buffer is read until it is empty
  // after the writes, which are done by the time the call returns).
  std::string Drain() {
    std::string out;
    for (;;) {
      struct pollfd pfd = {master_.get(), POLLIN, 0};
      if (poll(&pfd, 1, 200) <= 0) return out;
      char buffer[4096];
      ssize_t n = read(master_.get(), buffer, sizeof buffer);
      if (n <= 0) return out;
      out.append(buffer, static_cast<size_t>(n));
    }
  }
  UniqueFd master_, slave_;
  std::unique_ptr<Interaction> interaction_;
};

TEST_F(ColorInteractionTest, MarkdownIsFormattedAndRawWhenPlain) {
  Start(/*plain=*/false);
  interaction_->ShowText("# Plan\n- use **bold** and `code`\n");
  interaction_->ShowText("done");
  interaction_->ShowNotice("next");
  std::string out = Drain();
  EXPECT_THAT(out, HasSubstr("\x1b[1m\x1b[4mPlan\x1b[0m"));
  EXPECT_THAT(out, HasSubstr("\xe2\x80\xa2 use \x1b[1mbold\x1b[22m and "
                             "\x1b[36mcode\x1b[39m"));
  EXPECT_THAT(out, HasSubstr("done\nnext"));
  // Negative control: --plain shows the model's text as written.
  Start(/*plain=*/true);
  interaction_->ShowText("# Plan\n- use **bold**\n");
  out = Drain();
  EXPECT_THAT(out, HasSubstr("# Plan\n- use **bold**"));
  EXPECT_THAT(out, Not(HasSubstr("\x1b[")));
}

TEST_F(ColorInteractionTest, ModelTextCannotSmuggleEscapesThroughMarkdown) {
  Start(/*plain=*/false);
  interaction_->ShowText("**\x1b[2Jbold**\n");
  std::string out = Drain();
  EXPECT_THAT(out, Not(HasSubstr("\x1b[2J")));
  EXPECT_THAT(out, HasSubstr("\\e[2J"));
}

TEST_F(ColorInteractionTest, ACommandsProgressTailAndWholeOutput) {
  Start(/*plain=*/false);
  interaction_->ShowToolCall({"c1", "bash", "bash: make"});
  CommandProgress progress;
  progress.elapsed = absl::Seconds(75);
  progress.last_line = "compiling \x1b[31mx.c";
  interaction_->ShowCommandProgress(progress);
  std::string out = Drain();
  EXPECT_THAT(out, HasSubstr("\r\x1b[2K\x1b[2m   ... 1m 15s  compiling "
                             "\\e[31mx.c"));
  std::string output;
  for (int i = 1; i <= 25; ++i) absl::StrAppend(&output, "line ", i, "\n");
  ToolOutcomeView outcome{"c1", "bash", "exited with code 0", false};
  outcome.output = output;
  interaction_->ShowToolOutcome(outcome);
  out = Drain();
  // The progress line is erased first; then the last ten lines.
  EXPECT_EQ(out.find("\r\x1b[2K"), 0u) << out;
  EXPECT_THAT(out, HasSubstr("15 earlier lines not shown (/output shows all "
                             "25)"));
  EXPECT_THAT(out, HasSubstr("line 16\n"));
  EXPECT_THAT(out, HasSubstr("line 25\n"));
  EXPECT_THAT(out, Not(HasSubstr("line 15\n")));
  EXPECT_THAT(out, HasSubstr("exited with code 0"));
  ASSERT_TRUE(interaction_->ShowLastOutput());
  out = Drain();
  EXPECT_THAT(out, HasSubstr("line 1\n"));
  EXPECT_THAT(out, HasSubstr("line 15\n"));
}

TEST_F(InteractionTest, NoProgressLineAndNoOutputWithoutATerminal) {
  CommandProgress progress;
  progress.elapsed = absl::Seconds(3);
  interaction_->ShowCommandProgress(progress);
  EXPECT_EQ(Output(), "");
  EXPECT_FALSE(interaction_->ShowLastOutput());
  ToolOutcomeView outcome{"c1", "bash", "exited with code 0", false};
  outcome.output = "hello\n";
  interaction_->ShowToolOutcome(outcome);
  EXPECT_THAT(Output(), HasSubstr("   | hello\n   exited with code 0\n"));
}

}  // namespace
}  // namespace terminal
}  // namespace garuda
