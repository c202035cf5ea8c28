#include "lib/staging/staged_guard.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/lockdown/roles.h"

namespace garuda {
namespace {

// Runs a StagedGuard in a child process of its own (the guard ends by the
// signal it catches), with `run` as the staged run; returns the guard's
// wait status.
int GuardedInAChild(const std::string& project, const std::function<int()>& run) {
  pid_t guard = ::fork();
  if (guard == 0) {
    StagedGuardOptions options;
    options.project = project;
    absl::StatusOr<StagedGuard> forked = StagedGuard::Fork(options);
    if (!forked.ok()) ::_exit(125);
    if (!forked->is_guard()) {
      int code = run();
      std::fflush(nullptr);
      ::_exit(code);
    }
    // The guard's lockdown (main.cc's) is not what these tests are about:
    // the staging role's own tests are.
    ::_exit(forked->Wait());
  }
  int status = 0;
  ::waitpid(guard, &status, 0);
  return status;
}

std::string TempFolder() {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string pattern = std::string(base ? base : "/tmp") + "/guard.XXXXXX";
  return ::mkdtemp(pattern.data());
}

// A signal that reaches the guard before the run asks to write its list
// (as a terminal's Ctrl-C reaches the whole group at once) ends the run
// with nothing written, whoever the scheduler runs first: the guard takes
// a pending signal before it answers. Before the permit, the run wrote
// its list when it was scheduled ahead of the guard (1 run of
// tests/staging:staged_signal_test in 20 under load).
TEST(StagedGuardTest, ASignalBeforeTheListMeansNothingIsWritten) {
  const std::string folder = TempFolder();
  const std::string listed = folder + "/listed";
  for (int round = 0; round < 20; ++round) {
    int status = GuardedInAChild(folder, [&] {
      ::kill(::getppid(), SIGINT);
      if (!OutputPermitted()) return 3;
      WriteFileAtomically(listed, "the list\n", 0600).IgnoreError();
      return 0;
    });
    ASSERT_TRUE(WIFSIGNALED(status)) << "round " << round << ": " << status;
    EXPECT_EQ(WTERMSIG(status), SIGINT);
    EXPECT_NE(::access(listed.c_str(), F_OK), 0) << "round " << round;
  }
}

// Control: with no signal the run is permitted and its exit code comes
// back.
TEST(StagedGuardTest, WithoutASignalTheRunWritesItsList) {
  const std::string folder = TempFolder();
  const std::string listed = folder + "/listed";
  int status = GuardedInAChild(folder, [&] {
    if (!OutputPermitted()) return 3;
    return WriteFileAtomically(listed, "the list\n", 0600).ok() ? 7 : 4;
  });
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 7);
  EXPECT_EQ(::access(listed.c_str(), F_OK), 0);
}

// Outside a guarded run there is no one to ask: writing is permitted.
TEST(StagedGuardTest, OutsideAGuardedRunOutputIsPermitted) {
  EXPECT_TRUE(OutputPermitted());
}

}  // namespace
}  // namespace garuda
