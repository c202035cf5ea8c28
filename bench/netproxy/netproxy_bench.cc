// Throughput, latency and memory of the allow list's proxy (issue 21,
// point 5), in one run: the real `garuda-stager proxy` process (locked down,
// as in a session), attached as the sandbox attaches it (a listening socket
// handed over a Unix socket), against a direct loopback connection to the
// same origin.
//   bazel run -c opt //bench/netproxy:netproxy_bench -- [MB] [requests]
// Goals: through the proxy at least 80% of direct throughput on a 100 MB
// download; under 1 ms added per request (a new connection each, as curl
// makes).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/channel.h"
#include "lib/netproxy/session_proxy.h"
#include "lib/policy/merge.h"

namespace garuda {
namespace {

using Clock = std::chrono::steady_clock;

UniqueFd Listen(uint16_t* port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length);
  *port = ntohs(address.sin_port);
  ::listen(fd.get(), 512);
  return fd;
}

UniqueFd Connect(uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in to = {};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    std::perror("connect");
    std::exit(1);
  }
  return fd;
}

// "GET /big" answers `big_bytes` bytes; anything else a short body.
void Origin(int listener, size_t big_bytes) {
  std::vector<char> chunk(256 * 1024, 'x');
  while (true) {
    int client = ::accept(listener, nullptr, nullptr);
    if (client < 0) return;
    std::thread([client, big_bytes, &chunk] {
      std::string head;
      char buffer[4096];
      while (head.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        head.append(buffer, n);
      }
      bool big = head.rfind("GET /big", 0) == 0;
      size_t body = big ? big_bytes : 2;
      std::string reply = absl::StrCat("HTTP/1.1 200 OK\r\nContent-Length: ", body,
                                       "\r\nConnection: close\r\n\r\n");
      ::send(client, reply.data(), reply.size(), MSG_NOSIGNAL);
      if (!big) {
        ::send(client, "ok", 2, MSG_NOSIGNAL);
      } else {
        for (size_t sent = 0; sent < body;) {
          size_t n = std::min(chunk.size(), body - sent);
          ssize_t w = ::send(client, chunk.data(), n, MSG_NOSIGNAL);
          if (w <= 0) break;
          sent += static_cast<size_t>(w);
        }
      }
      ::close(client);
    }).detach();
  }
}

// Reads the whole answer; returns its bytes.
size_t ReadAll(int fd) {
  std::vector<char> buffer(256 * 1024);
  size_t total = 0;
  while (true) {
    ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n <= 0) return total;
    total += static_cast<size_t>(n);
  }
}

// One request: direct to the origin, or through the proxy with CONNECT.
size_t Request(bool proxied, uint16_t origin, uint16_t proxy, const char* path) {
  UniqueFd fd = Connect(proxied ? proxy : origin);
  if (proxied) {
    std::string connect = absl::StrCat("CONNECT allowed.test:", origin,
                                       " HTTP/1.1\r\nHost: allowed.test\r\n\r\n");
    ::send(fd.get(), connect.data(), connect.size(), MSG_NOSIGNAL);
    // "HTTP/1.1 200 Connection established\r\n\r\n"
    std::string answer;
    char c;
    while (answer.find("\r\n\r\n") == std::string::npos &&
           ::recv(fd.get(), &c, 1, 0) == 1) {
      answer.push_back(c);
    }
    if (answer.rfind("HTTP/1.1 200", 0) != 0) {
      std::fprintf(stderr, "the proxy refused: %s\n", answer.c_str());
      std::exit(1);
    }
  }
  std::string get = absl::StrCat("GET ", path, " HTTP/1.1\r\nHost: allowed.test\r\n\r\n");
  ::send(fd.get(), get.data(), get.size(), MSG_NOSIGNAL);
  return ReadAll(fd.get());
}

long StatusKb(pid_t pid, const char* field) {
  auto text = ReadFileToString(absl::StrCat("/proc/", pid, "/status"));
  if (!text.ok()) return -1;
  size_t at = text->find(field);
  if (at == std::string::npos) return -1;
  return std::atol(text->c_str() + at + std::strlen(field) + 1);
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

int Main(int argc, char** argv) {
  size_t megabytes = argc > 1 ? std::atoi(argv[1]) : 100;
  int requests = argc > 2 ? std::atoi(argv[2]) : 500;
  std::string stager = "cmd/garuda-stager/garuda-stager";  // bazel run's cwd
  if (::access(stager.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "run me with: bazel run -c opt //bench/netproxy:netproxy_bench\n");
    return 2;
  }
  uint16_t origin_port = 0;
  UniqueFd origin = Listen(&origin_port);
  std::thread(Origin, origin.get(), megabytes << 20).detach();

  ::setenv("GARUDA_TEST_PROXY_NAME_MAP", "allowed.test=127.0.0.1", 1);
  MergedSettings settings;
  settings.network_access = NetworkAccess::kAllowList;
  settings.settings.mutable_sandbox()->add_allowed_domains("allowed.test");
  settings.settings.mutable_sandbox()->add_allowed_ports(origin_port);
  auto proxy = netproxy::SessionProxy::Start(settings, stager, "");
  if (!proxy.ok()) {
    std::fprintf(stderr, "%s\n", std::string(proxy.status().message()).c_str());
    return 1;
  }
  long idle_kb = StatusKb((*proxy)->pid(), "VmRSS:");
  auto run = (*proxy)->Begin();
  if (!run.ok()) return 1;
  // As the sandbox's PID 1 does: a listener handed over the Unix socket.
  uint16_t proxy_port = 0;
  UniqueFd listener = Listen(&proxy_port);
  int fd = listener.get();
  char byte = 'L';
  if (ipc::SendWithDescriptors((*run)->handoff_fd(), &byte, 1, {&fd, 1}) != 1) {
    std::perror("hand over");
    return 1;
  }
  listener.Reset();

  std::printf("netproxy bench: %zu MB download, %d requests, the real garuda-stager proxy\n",
              megabytes, requests);
  // Throughput: alternate, three rounds each, the best of each.
  double best[2] = {0, 0};
  for (int round = 0; round < 3; ++round) {
    for (int proxied = 0; proxied < 2; ++proxied) {
      auto start = Clock::now();
      size_t got = Request(proxied, origin_port, proxy_port, "/big");
      double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      best[proxied] = std::max(best[proxied], got / seconds / (1 << 20));
    }
  }
  std::printf("  download   direct %8.0f MB/s   proxy %8.0f MB/s   %5.1f %% of direct (goal >= 80 %%)\n",
              best[0], best[1], 100 * best[1] / best[0]);
  // Latency: a new connection per request, interleaved.
  std::vector<double> times[2];
  for (int i = 0; i < requests; ++i) {
    for (int proxied = 0; proxied < 2; ++proxied) {
      auto start = Clock::now();
      Request(proxied, origin_port, proxy_port, "/small");
      times[proxied].push_back(
          std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
  }
  double direct = Median(times[0]), proxied = Median(times[1]);
  std::printf("  request    direct %8.1f us      proxy %8.1f us      +%.1f us per request (goal < 1000)\n",
              direct, proxied, proxied - direct);
  std::printf("  requests/s direct %8.0f         proxy %8.0f\n", 1e6 / direct, 1e6 / proxied);
  std::printf("  proxy memory: %ld kB idle, %ld kB peak (VmHWM)\n", idle_kb,
              StatusKb((*proxy)->pid(), "VmHWM:"));
  (*run)->End().IgnoreError();
  return 0;
}

}  // namespace
}  // namespace garuda

int main(int argc, char** argv) { return garuda::Main(argc, argv); }
