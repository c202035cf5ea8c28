// LockDownAs(Role::kProxy) in forked children: no write anywhere, no exec, no
// bind or listen, no packet socket, TCP connects only to the allowed ports
// (Landlock ABI 4); each with the same child unlocked as its negative control.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/lockdown/landlock.h"
#include "lib/lockdown/roles.h"
#include "lib/lockdown/test_child.h"

namespace garuda {
namespace {

std::string Connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoName(fd);
  sockaddr_in to = {};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int result = ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to);
  std::string name = ErrnoName(result);
  ::close(fd);
  return name;
}

std::string Bind() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoName(fd);
  sockaddr_in at = {};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string name =
      ErrnoName(::bind(fd, reinterpret_cast<sockaddr*>(&at), sizeof at));
  ::close(fd);
  return name;
}

std::string Everything(bool lock, int allowed, int other, bool exec_too = true) {
  absl::StatusOr<std::string> result = RunInChild([&]() -> std::string {
    if (lock) {
      RoleNeeds needs;
      needs.tcp_connect_ports = {allowed};
      absl::StatusOr<LockdownReport> locked =
          LockDownAs(Role::kProxy, needs, {});
      if (!locked.ok()) return locked.status().ToString();
    }
    std::string file = absl::StrCat(std::getenv("TEST_TMPDIR"), "/proxy-",
                                     lock ? "locked" : "open", "-", ::getpid());
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    std::string write = fd >= 0 ? "0" : ErrnoName(fd);
    if (fd >= 0) ::close(fd);
    int packet = ::socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    std::string packet_result = packet >= 0 ? "0" : ErrnoName(packet);
    if (packet >= 0) ::close(packet);
    char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
    std::string exec = exec_too ? ErrnoName(::execv("/bin/true", argv)) : "-";
    return absl::StrCat("write ", write, " bind ", Bind(), " allowed ",
                        Connect(allowed), " other ", Connect(other), " exec ",
                        exec, packet_result == "0" ? "" : " packet refused");
  });
  return result.ok() ? *result : result.status().ToString();
}

TEST(ProxyLockdownTest, OnlyConnectsToAllowedPortsAndNothingElse) {
  int allowed = 0, other = 0;
  absl::StatusOr<UniqueFd> a = ListenOnLoopback(&allowed);
  absl::StatusOr<UniqueFd> b = ListenOnLoopback(&other);
  ASSERT_TRUE(a.ok() && b.ok());
  absl::StatusOr<int> abi = LandlockAbiVersion();
  ASSERT_TRUE(abi.ok());
  const std::string other_connect = *abi >= 4 ? "EACCES" : "0";
  EXPECT_EQ(Everything(true, allowed, other),
            absl::StrCat("write EACCES bind EPERM allowed 0 other ",
                         other_connect, " exec EPERM packet refused"));
  // Negative controls: the same child without the lockdown does all of it,
  // and its exec replaces it (so it answers nothing).
  EXPECT_EQ(Everything(false, allowed, other, /*exec_too=*/false),
            "write 0 bind 0 allowed 0 other 0 exec -");
  EXPECT_EQ(Everything(false, allowed, other), "");
}

}  // namespace
}  // namespace garuda
