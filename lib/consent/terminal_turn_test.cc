#include "lib/consent/terminal_turn.h"

#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>

#include "gtest/gtest.h"

namespace garuda {
namespace {

// What the job reported: "line:<text> restored:<0|1>", or "stopped" when
// the read stopped it (SIGTTIN), as it stops any background job.
constexpr int kChildDeadlineSeconds = 20;

// In a forked child: the pty becomes its controlling terminal (a new
// session, as the agent's terminal is), then a job in a process group of
// its own (a background job, as the helpers are) reads one line from it,
// within a TerminalTurn when `turn`. The result goes to `report`.
[[noreturn]] void RunSession(int slave, int report, bool turn) {
  ::alarm(kChildDeadlineSeconds);  // a hang ends as a failure, not forever
  ::setsid();
  if (::ioctl(slave, TIOCSCTTY, 0) != 0) ::_exit(10);
  pid_t job = ::fork();
  if (job == 0) {
    ::setpgid(0, 0);
    std::string result;
    {
      std::unique_ptr<TerminalTurn> holder;
      if (turn) holder = std::make_unique<TerminalTurn>(slave);
      char buffer[64];
      ssize_t n = ::read(slave, buffer, sizeof(buffer));
      result = "line:" + std::string(buffer, n > 0 ? n : 0);
    }
    result += ::tcgetpgrp(slave) == ::getppid() ? "restored:1" : "restored:0";
    (void)!::write(report, result.data(), result.size());
    ::_exit(0);
  }
  ::setpgid(job, job);
  int status = 0;
  ::waitpid(job, &status, WUNTRACED);
  if (WIFSTOPPED(status)) {
    (void)!::write(report, "stopped", 7);
    ::kill(job, SIGKILL);
    ::waitpid(job, &status, 0);
  }
  ::_exit(0);
}

std::string Session(bool turn) {
  int master = -1, slave = -1;
  if (::openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return "";
  int report[2];
  if (::pipe(report) != 0) return "";
  pid_t child = ::fork();
  if (child == 0) {
    ::close(master);
    ::close(report[0]);
    RunSession(slave, report[1], turn);
  }
  ::close(slave);
  ::close(report[1]);
  // The person's answer waits in the terminal's input until it is read.
  (void)!::write(master, "yes\n", 4);
  std::string result;
  char buffer[256];
  ssize_t n;
  while ((n = ::read(report[0], buffer, sizeof(buffer))) > 0) {
    result.append(buffer, n);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ::close(report[0]);
  ::close(master);
  if (WIFSIGNALED(status))
    result +=
        " (session killed by signal " + std::to_string(WTERMSIG(status)) + ")";
  return result;
}

// A background job that borrows the terminal reads the person's line, and
// the foreground goes back to the group that had it.
TEST(TerminalTurnTest, ABackgroundJobReadsWithinATurnAndGivesTheTerminalBack) {
  std::string result = Session(/*turn=*/true);
  EXPECT_NE(result.find("line:yes\n"), std::string::npos) << result;
  EXPECT_NE(result.find("restored:1"), std::string::npos) << result;
}

// The negative control: the same job without the turn is stopped by its
// read, as every background job is: a helper could not ask at all.
TEST(TerminalTurnTest, WithoutATurnTheBackgroundReadStopsTheJob) {
  EXPECT_EQ(Session(/*turn=*/false), "stopped");
}

// A terminal that is not this process's controlling terminal (a test's
// pseudo-terminal opened by path): nothing to take, the settings still set.
TEST(TerminalTurnTest, ATerminalThatIsNotOursIsNotTaken) {
  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  struct termios raw;
  ASSERT_EQ(::tcgetattr(slave, &raw), 0);
  cfmakeraw(&raw);
  ASSERT_EQ(::tcsetattr(slave, TCSANOW, &raw), 0);
  {
    TerminalTurn turn(slave);
    EXPECT_FALSE(turn.took_foreground());
    struct termios during;
    ASSERT_EQ(::tcgetattr(slave, &during), 0);
    EXPECT_NE(during.c_lflag & ICANON, 0u);
    EXPECT_NE(during.c_lflag & ECHO, 0u);
  }
  struct termios after;
  ASSERT_EQ(::tcgetattr(slave, &after), 0);
  EXPECT_EQ(after.c_lflag & ICANON, 0u);  // put back as it was
  ::close(master);
  ::close(slave);
}

// A helper killed (SIGKILL) while its question had the terminal raw: the
// agent's handover puts the settings back. The control: without Restore
// the terminal stays raw.
TEST(TerminalHandoverTest, TakingTheTerminalBackUndoesAKilledHelpersRawMode) {
  int master = -1, slave = -1;
  ASSERT_EQ(::openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  struct termios raw;
  for (bool restore : {false, true}) {
    TerminalHandover handover;
    handover.Save(slave);
    ASSERT_EQ(::tcgetattr(slave, &raw), 0);
    cfmakeraw(&raw);  // what the dead helper left
    ASSERT_EQ(::tcsetattr(slave, TCSANOW, &raw), 0);
    if (restore) handover.Restore(slave);
    struct termios after;
    ASSERT_EQ(::tcgetattr(slave, &after), 0);
    EXPECT_EQ((after.c_lflag & ICANON) != 0, restore);
    EXPECT_EQ((after.c_lflag & ECHO) != 0, restore);
    if (!restore) {  // back to line mode for the second round
      after.c_lflag |= ICANON | ECHO;
      ASSERT_EQ(::tcsetattr(slave, TCSANOW, &after), 0);
    }
  }
  ::close(master);
  ::close(slave);
}

}  // namespace
}  // namespace garuda
