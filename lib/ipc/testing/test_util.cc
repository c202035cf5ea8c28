#include "lib/ipc/testing/test_util.h"

#include <dirent.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"

namespace garuda {
namespace ipc {

std::string LengthPrefix(uint32_t length) {
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(length >> (8 * i));
  return out;
}

std::string Frame(const google::protobuf::MessageLite& message) {
  std::string body = message.SerializeAsString();
  return LengthPrefix(static_cast<uint32_t>(body.size())) + body;
}

absl::Status SendRaw(int socket, absl::string_view bytes,
                     const std::vector<int>& fds) {
  struct iovec iov = {const_cast<char*>(bytes.data()), bytes.size()};
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<uint64_t> control;
  if (!fds.empty()) {
    size_t space = CMSG_SPACE(fds.size() * sizeof(int));
    control.assign((space + 7) / 8, 0);
    msg.msg_control = control.data();
    msg.msg_controllen = space;
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(fds.size() * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds.data(), fds.size() * sizeof(int));
  }
  ssize_t n = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
  if (n < 0) return LastErrnoStatus("sendmsg");
  if (static_cast<size_t>(n) != bytes.size()) {
    return absl::InternalError(
        absl::StrCat("short sendmsg: ", n, " of ", bytes.size()));
  }
  return absl::OkStatus();
}

std::vector<int> OpenFds() {
  std::vector<int> fds;
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  while (struct dirent* entry = ::readdir(dir)) {
    int fd;
    if (absl::SimpleAtoi(entry->d_name, &fd) && fd != ::dirfd(dir)) {
      fds.push_back(fd);
    }
  }
  ::closedir(dir);
  return fds;
}

}  // namespace ipc
}  // namespace garuda
