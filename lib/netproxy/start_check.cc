#include "lib/netproxy/start_check.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/rules/domain_rules.h"
#include "sandbox/command_policy.h"
#include "sandbox/network_proxy.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace netproxy {
namespace {

std::string Errno(int error) { return std::strerror(error); }

// A connect that must fail at once (no route) rather than start: a
// non-blocking connect that is in progress or done means a way out exists.
std::string DirectConnectFails(int family, const char* address, int port) {
  UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) return "";  // no IP socket at all: nothing bypasses
  sockaddr_storage storage = {};
  socklen_t length;
  if (family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&storage);
    in->sin_family = AF_INET;
    in->sin_port = htons(port);
    ::inet_pton(AF_INET, address, &in->sin_addr);
    length = sizeof *in;
  } else {
    auto* in = reinterpret_cast<sockaddr_in6*>(&storage);
    in->sin6_family = AF_INET6;
    in->sin6_port = htons(port);
    ::inet_pton(AF_INET6, address, &in->sin6_addr);
    length = sizeof *in;
  }
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&storage), length) == 0 ||
      errno == EINPROGRESS) {
    return absl::StrCat("a direct connection to ", address, " port ", port,
                        " (bypassing the proxy) was not refused: the sandbox "
                        "has a route out\n");
  }
  return "";
}

std::string UdpFails() {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) return "";
  sockaddr_in to = {};
  to.sin_family = AF_INET;
  to.sin_port = htons(53);
  ::inet_pton(AF_INET, "1.1.1.1", &to.sin_addr);
  const char query[] = "garuda";
  if (::sendto(fd.get(), query, sizeof query, 0,
               reinterpret_cast<sockaddr*>(&to), sizeof to) >= 0) {
    return "a UDP datagram to 1.1.1.1 port 53 (DNS) was sent: the sandbox has "
           "a route out\n";
  }
  return "";
}

std::string RawSocketsFail() {
  std::string failures;
  struct Kind {
    int family, type, protocol;
    const char* name;
  };
  for (const Kind& kind : {Kind{AF_INET, SOCK_RAW, IPPROTO_ICMP, "raw IPv4"},
                           Kind{AF_INET6, SOCK_RAW, IPPROTO_ICMPV6, "raw IPv6"},
                           Kind{AF_PACKET, SOCK_RAW, 0, "packet"}}) {
    int fd = ::socket(kind.family, kind.type | SOCK_CLOEXEC, kind.protocol);
    if (fd >= 0) {
      ::close(fd);
      absl::StrAppend(&failures, "a ", kind.name,
                      " socket could be made in the sandbox\n");
    }
  }
  return failures;
}

// The proxy answers a CONNECT to a host outside the list with its 403.
std::string ProxyRefuses(uint32_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd) return absl::StrCat("no TCP socket for the proxy: ", Errno(errno), "\n");
  sockaddr_in to = {};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    return absl::StrCat("the proxy does not answer on 127.0.0.1:", port, ": ",
                        Errno(errno), "\n");
  }
  const std::string request =
      absl::StrCat("CONNECT ", kStartCheckHost, ":443 HTTP/1.1\r\nHost: ",
                   kStartCheckHost, ":443\r\n\r\n");
  if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    return absl::StrCat("the proxy did not take a request: ", Errno(errno), "\n");
  }
  std::string answer;
  char buffer[4096];
  while (answer.size() < 8192) {
    struct pollfd p = {fd.get(), POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0) break;
    ssize_t n = ::recv(fd.get(), buffer, sizeof buffer, 0);
    if (n <= 0) break;
    answer.append(buffer, static_cast<size_t>(n));
  }
  if (!absl::StartsWith(answer, "HTTP/1.1 403") ||
      !absl::StrContains(answer, "not in sandbox.allowedDomains")) {
    std::string first = answer.substr(0, answer.find('\r'));
    return absl::StrCat("the proxy did not refuse ", kStartCheckHost,
                        ", a host outside sandbox.allowedDomains (it answered \"",
                        first.empty() ? "nothing" : first, "\")\n");
  }
  return "";
}

}  // namespace

absl::Status ProveNetworkEnforcement(const MergedSettings& settings,
                                     const std::string& project,
                                     SessionProxy* proxy) {
  std::vector<std::string> allowed(
      settings.settings.sandbox().allowed_domains().begin(),
      settings.settings.sandbox().allowed_domains().end());
  ASSIGN_OR_RETURN(DomainRules rules, DomainRules::Create(allowed, {}));
  if (rules.Check(kStartCheckHost) != DomainRules::Verdict::kNotListed) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the strict start check asks the proxy for ", kStartCheckHost,
        ", and sandbox.allowedDomains allows it; take \"*.invalid\" out of the "
        "list (no real host is under .invalid)"));
  }
  CommandRequest request;
  request.project = project;
  request.working_directory = project;
  ASSIGN_OR_RETURN(SandboxPolicy policy, DirectCommandPolicy(settings, request));
  if (!policy.has_network_proxy()) {
    return absl::InternalError("the start check's policy has no network proxy");
  }
  // The canary changes nothing: the project stays read-only to it.
  policy.set_project_writable(false);
  policy.mutable_limits()->set_wall_time_ms(20000);
  const uint32_t port = policy.network_proxy().port();
  RunOptions run;
  run.capture_output = true;
  run.entry = [port] {
    std::string failures = ProxyRefuses(port);
    failures += DirectConnectFails(AF_INET, "1.1.1.1", 443);
    failures += DirectConnectFails(AF_INET, "192.0.2.1", 80);
    failures += DirectConnectFails(AF_INET6, "2606:4700:4700::1111", 443);
    failures += UdpFails();
    failures += RawSocketsFail();
    (void)!::write(1, failures.data(), failures.size());
    return failures.empty() ? 0 : 1;
  };
  std::vector<proxy::NetworkEvent> asked;
  ASSIGN_OR_RETURN(RunResult ran,
                   RunAttached(proxy, &run.proxy_handoff_fd, &asked,
                               [&] { return RunInSandbox(policy, run); }));
  if (ran.kind == RunResult::Kind::kExited && ran.exit_code == 0) {
    return absl::OkStatus();
  }
  std::string why(absl::StripSuffix(ran.stdout_data, "\n"));
  if (why.empty()) why = ran.Describe();
  absl::StrReplaceAll({{"\n", "; "}}, &why);
  return absl::FailedPreconditionError(absl::StrCat(
      "the strict profile's network check failed, so the session does not "
      "start: ",
      why));
}

}  // namespace netproxy
}  // namespace garuda
