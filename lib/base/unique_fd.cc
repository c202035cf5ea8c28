#include "lib/base/unique_fd.h"

#include <unistd.h>

namespace garuda {

void UniqueFd::Reset(int fd) {
  if (fd_ >= 0) {
    // close() is not retried on EINTR: on Linux the descriptor is released
    // even then, and a retry could close a descriptor another thread opened.
    ::close(fd_);
  }
  fd_ = fd;
}

}  // namespace garuda
