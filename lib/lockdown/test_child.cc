#include "lib/lockdown/test_child.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
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

absl::StatusOr<UniqueFd> ListenOnLoopback(int* port) {
  UniqueFd listener(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener) return LastErrnoStatus("socket(AF_INET)");
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(listener.get(), reinterpret_cast<sockaddr*>(&address),
           sizeof(address)) != 0 ||
      listen(listener.get(), 8) != 0 ||
      getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address),
                  &length) != 0) {
    return LastErrnoStatus("listen on 127.0.0.1");
  }
  *port = ntohs(address.sin_port);
  return listener;
}

std::string ErrnoName(long result) {
  if (result >= 0) return "0";
  const char* name = strerrorname_np(errno);
  return name != nullptr ? name : absl::StrCat("errno ", errno);
}

}  // namespace garuda
