// What became of a command: a type, not an int, so a caller cannot mistake a
// seccomp kill or a timeout for an exit code.
#ifndef GARUDA_SANDBOX_RUN_RESULT_H_
#define GARUDA_SANDBOX_RUN_RESULT_H_

#include <cstdint>
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
    kStopped,        // the caller asked to stop it (RunOptions::cancel_fd)
  };
  Kind kind = Kind::kFailedToStart;
  int exit_code = 0;
  int signal = 0;
  std::string reason;
  // kFailedToStart only: the sandbox itself could not be set up (namespaces,
  // mounts, Landlock, seccomp), as opposed to a command that does not exist.
  bool sandbox_failed = false;
  // The memory cgroup's OOM kills in the run (its OOM killer ended a
  // process: the command itself makes the kind kOutOfMemory, a process it
  // started shows only here). 0 without a memory cgroup.
  uint64_t oom_kills = 0;
  // How limits without a cgroup were enforced instead, and why ("the memory
  // limit is an address-space rlimit ...: <reason>"); empty when each limit
  // set had its cgroup. Under the rlimit a command over its memory is
  // reported as what it did (an exit code, SIGSEGV, SIGKILL), never guessed
  // to be out of memory.
  std::string limits_note;

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
  // time limit", "failed to start: mount(/usr): Permission denied". A run
  // that did not succeed also names its OOM kills and the limits note.
  std::string Describe() const;
  // The kind alone: "out of memory: the memory limit ended it".
  std::string DescribeKind() const;
  // The code a shell would give: the exit code, 128 + signal, 124 for a
  // timeout (as timeout(1)), 125 for a failure to start.
  int ShellExitCode() const;
};

}  // namespace garuda

#endif  // GARUDA_SANDBOX_RUN_RESULT_H_
