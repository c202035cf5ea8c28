// Running the real garuda-applier in tests: a project and its staged copy
// in $TEST_TMPDIR, a home of its own (the undo store), the program with
// its output captured, and the pause seam (GARUDA_TEST_ONLY_APPLY_PAUSE)
// that stops an apply at a chosen step so a test can act in that window.
#ifndef GARUDA_TESTS_APPLY_RUNNER_H_
#define GARUDA_TESTS_APPLY_RUNNER_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "lib/changeset/changeset.h"
#include "lib/changeset/test_tree.h"

namespace garuda::testing {

std::string ApplierBinary();

struct Result {
  int code = -1;  // the exit code, or 128 + the signal that ended it
  std::string out;
  std::string err;
  std::string terminal;  // what the question showed
};

struct Scene : ProjectPair {
  std::string home;
};
Scene MakeScene();

// In a forked child: stdin from `in` (a file; empty: /dev/null), stdout and
// stderr to files, HOME set to the scene's, then exec of the applier.
[[noreturn]] void ChildExec(const Scene& scene,
                            const std::vector<std::string>& args,
                            const std::string& in, const std::string& out,
                            const std::string& err);

int Wait(pid_t pid);

// Runs garuda-applier with `in` (a file) on stdin and no terminal.
Result RunApplier(const Scene& scene, const std::vector<std::string>& args,
                  const std::string& in = "");

// The change list of the staged copy, in a file. `extra` may replace the
// source: {"--upper", DIR} walks an overlay layer.
std::string ChangeList(const Scene& scene, std::vector<std::string> extra = {});

// A change list written by the test (a crafted one), in a file.
std::string WriteList(const ChangeSet& change_set);

std::vector<std::string> ApplyArgs(const Scene& scene, const std::string& how);

// An applier stopped before step `step` of its apply.
struct Paused {
  pid_t pid = -1;
  int seam = -1;        // our end of the seam's socketpair
  bool paused = false;  // false: it ended (or a minute passed) first
  std::string out, err;
};
Paused StartPaused(const Scene& scene, const std::vector<std::string>& args,
                   const std::string& in, int step);
// Sends `answer` ('c' go on, 'f' fail there, 0: nothing, just close) and
// waits for the program to end.
Result Finish(Paused& paused, char answer);

// Every name starting with ".garuda-" beneath `root` (a temporary or a
// work folder of the applier).
std::vector<std::string> Temporaries(const std::string& root);

}  // namespace garuda::testing

#endif  // GARUDA_TESTS_APPLY_RUNNER_H_
