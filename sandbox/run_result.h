// What became of a command: a type, not an int, so a caller cannot mistake a
// seccomp kill or a timeout for an exit code.
#ifndef GARUDA_SANDBOX_RUN_RESULT_H_
#define GARUDA_SANDBOX_RUN_RESULT_H_

#include <string>

namespace garuda {

struct RunResult {
  enum class Kind {
    kExited,         // exit_code
    kSignaled,       // signal
    kSeccompKilled,  // the seccomp filter killed it (SIGSYS)
    kTimedOut,       // the wall-time limit ended it
    kOutOfMemory,    // the memory limit ended it
    kFailedToStart,  // reason: nothing of the command ran
  };
  Kind kind = Kind::kFailedToStart;
  int exit_code = 0;
  int signal = 0;
  std::string reason;
  // kFailedToStart only: the sandbox itself could not be set up (namespaces,
  // mounts, Landlock, seccomp), as opposed to a command that does not exist.
  bool sandbox_failed = false;

  // Captured output (when the run captures), at most the cap each.
  std::string stdout_data;
  std::string stderr_data;
  bool stdout_truncated = false;
  bool stderr_truncated = false;

  static RunResult Exited(int code);
  static RunResult Signaled(int signal);
  static RunResult FailedToStart(std::string reason);

  bool ok() const { return kind == Kind::kExited && exit_code == 0; }
  // One line for a person: "exited with code 3", "timed out after the wall
  // time limit", "failed to start: mount(/usr): Permission denied".
  std::string Describe() const;
  // The code a shell would give: the exit code, 128 + signal, 124 for a
  // timeout (as timeout(1)), 125 for a failure to start.
  int ShellExitCode() const;
};

}  // namespace garuda

#endif  // GARUDA_SANDBOX_RUN_RESULT_H_
