#include "lib/ipc/testing/test_util.h"

#include <dirent.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/ipc/channel.h"

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
  ssize_t n = SendWithDescriptors(socket, bytes.data(), bytes.size(), fds);
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
