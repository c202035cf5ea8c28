#include "sandbox/network_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/unique_fd.h"

namespace garuda {

absl::Status CheckNetworkProxy(const SandboxPolicy& policy, int handoff_fd) {
  if (!policy.has_network_proxy()) return absl::OkStatus();
  if (policy.network()) {
    return absl::InvalidArgumentError(
        "the policy sets both network (all of it) and network_proxy (an allow "
        "list): one of them");
  }
  uint32_t port = policy.network_proxy().port();
  if (port == 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("network_proxy.port ", port, " is not a port"));
  }
  if (handoff_fd < 0) {
    return absl::FailedPreconditionError(
        "the command's network goes through the session's proxy, and no proxy "
        "is attached to this run (RunOptions::proxy_handoff_fd); nothing was "
        "run");
  }
  return absl::OkStatus();
}

absl::Status HandOverLoopbackListener(int handoff_fd, uint32_t port) {
  UniqueFd handoff(handoff_fd);
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener) return LastErrnoStatus("socket for the proxy's port");
  int one = 1;
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&address),
             sizeof address) != 0) {
    return LastErrnoStatus(absl::StrCat("bind 127.0.0.1:", port));
  }
  if (::listen(listener.get(), 128) != 0) {
    return LastErrnoStatus("listen on the proxy's port");
  }
  char byte = 'L';
  struct iovec io = {&byte, 1};
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  struct msghdr message = {};
  message.msg_iov = &io;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  struct cmsghdr* header = CMSG_FIRSTHDR(&message);
  header->cmsg_level = SOL_SOCKET;
  header->cmsg_type = SCM_RIGHTS;
  header->cmsg_len = CMSG_LEN(sizeof(int));
  int fd = listener.get();
  std::memcpy(CMSG_DATA(header), &fd, sizeof fd);
  ssize_t sent;
  do {
    sent = ::sendmsg(handoff.get(), &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent != 1) {
    return LastErrnoStatus(
        "hand the sandbox's loopback port to the network proxy (is it gone?)");
  }
  return absl::OkStatus();
}

void SetProxyEnvironment(uint32_t port, SandboxPolicy* policy) {
  auto& env = *policy->mutable_environment();
  const std::string http = absl::StrCat("http://127.0.0.1:", port);
  const std::string socks = absl::StrCat("socks5h://127.0.0.1:", port);
  for (const char* name : {"HTTP_PROXY", "http_proxy", "HTTPS_PROXY",
                           "https_proxy"}) {
    env[name] = http;
  }
  env["ALL_PROXY"] = socks;
  env["all_proxy"] = socks;
  env["NO_PROXY"] = "localhost,127.0.0.1,::1";
  env["no_proxy"] = "localhost,127.0.0.1,::1";
}

}  // namespace garuda
