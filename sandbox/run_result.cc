#include "sandbox/run_result.h"

#include <signal.h>
#include <string.h>

#include "absl/strings/str_cat.h"

namespace garuda {

RunResult RunResult::Exited(int code) {
  RunResult result;
  result.kind = Kind::kExited;
  result.exit_code = code;
  return result;
}

RunResult RunResult::Signaled(int signal) {
  RunResult result;
  result.kind = signal == SIGSYS ? Kind::kSeccompKilled : Kind::kSignaled;
  result.signal = signal;
  return result;
}

RunResult RunResult::FailedToStart(std::string reason) {
  RunResult result;
  result.kind = Kind::kFailedToStart;
  result.reason = std::move(reason);
  return result;
}

std::string RunResult::Describe() const {
  std::string text = DescribeKind();
  if (ok()) return text;
  if (oom_kills > 0 && kind != Kind::kOutOfMemory) {
    absl::StrAppend(&text, "; the memory limit ended ", oom_kills,
                    oom_kills == 1 ? " process" : " processes",
                    " in the sandbox");
  }
  if (!limits_note.empty()) absl::StrAppend(&text, " [", limits_note, "]");
  return text;
}

std::string RunResult::DescribeKind() const {
  switch (kind) {
    case Kind::kExited:
      return absl::StrCat("exited with code ", exit_code);
    case Kind::kSignaled:
      return absl::StrCat("killed by signal ", signal, " (",
                          ::strsignal(signal), ")");
    case Kind::kSeccompKilled:
      return "killed by the seccomp filter (a forbidden system call)";
    case Kind::kTimedOut:
      return "timed out: the wall time limit ended it";
    case Kind::kOutOfMemory:
      return "out of memory: the memory limit ended it";
    case Kind::kFailedToStart:
      return absl::StrCat("failed to start: ", reason);
    case Kind::kStopped:
      return "stopped: it and everything it started were ended on request";
  }
  return "unknown";
}

int RunResult::ShellExitCode() const {
  switch (kind) {
    case Kind::kExited:
      return exit_code;
    case Kind::kSignaled:
    case Kind::kSeccompKilled:
      return 128 + signal;
    case Kind::kTimedOut:
      return 124;
    case Kind::kOutOfMemory:
      return 137;
    case Kind::kFailedToStart:
      return 125;
    case Kind::kStopped:
      return 130;  // as a shell reports a command ended by Ctrl-C
  }
  return 125;
}

}  // namespace garuda
