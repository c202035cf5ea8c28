#include "lib/lockdown/test_child.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"

namespace garuda {

absl::StatusOr<std::string> RunInChild(
    const std::function<std::string()>& body) {
  int ends[2];
  if (pipe2(ends, O_CLOEXEC) != 0) return LastErrnoStatus("pipe2");
  UniqueFd read_end(ends[0]);
  UniqueFd write_end(ends[1]);
  pid_t pid = fork();
  if (pid < 0) return LastErrnoStatus("fork");
  if (pid == 0) {
    read_end.Reset();
    std::string result = body();
    _exit(WriteAll(write_end.get(), result).ok() ? 0 : 3);
  }
  write_end.Reset();
  absl::StatusOr<std::string> result = ReadAll(read_end.get());
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return LastErrnoStatus("waitpid");
  }
  if (WIFSIGNALED(status)) {
    return absl::AbortedError(
        absl::StrCat("child killed by signal ", WTERMSIG(status)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::AbortedError(
        absl::StrCat("child exited with ", WEXITSTATUS(status)));
  }
  return result;
}

std::string ErrnoName(long result) {
  if (result >= 0) return "0";
  const char* name = strerrorname_np(errno);
  return name != nullptr ? name : absl::StrCat("errno ", errno);
}

}  // namespace garuda
