// Throughput, latency and memory of the allow list's proxy (issue 21,
// point 5), in one run: the real `garuda-stager proxy` process (locked down,
// as in a session), attached as the sandbox attaches it (a listening socket
// handed over a Unix socket), against a direct loopback connection to the
// same origin.
//   bazel run -c opt //bench/netproxy:netproxy_bench -- [MB] [requests]
// Goals: through the proxy at least 80% of direct throughput on a 100 MB
// download; under 1 ms added per request (a new connection each, as curl
// makes). Beside them: the same download from an origin paced as a fast
// registry serves (kPacedMBps), the proxy's CPU per download, and, when
// haproxy is installed, a well-known relay (TCP mode, splice) on the same
// path, which bounds what any relay in a process of its own reaches here.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
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

// Alternating rounds of each download; the median and the best are shown.
constexpr int kRounds = 7;
// A fast registry or CDN as a developer's machine sees it.
constexpr int kPacedMBps = 100;

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

// "GET /big" answers `big_bytes` bytes, "GET /paced" the same no faster
// than kPacedMBps; anything else a short body.
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
      const bool paced = head.rfind("GET /paced", 0) == 0;
      const bool big = paced || head.rfind("GET /big", 0) == 0;
      if (paced) {
        unsigned long rate = static_cast<unsigned long>(kPacedMBps) << 20;
        ::setsockopt(client, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof rate);
      }
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

enum class Path { kDirect, kProxy, kHaproxy };

// One request: direct to the origin, through the proxy with CONNECT, or
// through a plain TCP relay (haproxy) that forwards to the origin.
size_t Request(Path path, uint16_t port, uint16_t origin, const char* target) {
  const bool proxied = path == Path::kProxy;
  UniqueFd fd = Connect(port);
  if (proxied) {
    std::string connect =
        absl::StrCat("CONNECT allowed.test:", origin, " HTTP/1.1\r\nHost: allowed.test\r\n\r\n");
    ::send(fd.get(), connect.data(), connect.size(), MSG_NOSIGNAL);
    // "HTTP/1.1 200 Connection established\r\n\r\n"
    std::string answer;
    char c;
    while (answer.find("\r\n\r\n") == std::string::npos && ::recv(fd.get(), &c, 1, 0) == 1) {
      answer.push_back(c);
    }
    if (answer.rfind("HTTP/1.1 200", 0) != 0) {
      std::fprintf(stderr, "the proxy refused: %s\n", answer.c_str());
      std::exit(1);
    }
  }
  std::string get = absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: allowed.test\r\n\r\n");
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

// User and system CPU of a process, in seconds.
double CpuSeconds(pid_t pid) {
  auto text = ReadFileToString(absl::StrCat("/proc/", pid, "/stat"));
  if (!text.ok()) return -1;
  size_t at = text->rfind(')');
  if (at == std::string::npos) return -1;
  unsigned long user = 0, system = 0;
  if (std::sscanf(text->c_str() + at + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
                  &user, &system) != 2) {
    return -1;
  }
  return static_cast<double>(user + system) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// haproxy in TCP mode with splice from `port` to the origin, when it is
// installed: a relay with no checks at all, as fast as a process of its own
// relays on this machine. 0 when there is none.
pid_t StartHaproxy(uint16_t origin, uint16_t* port, std::string* dir) {
  if (std::system("command -v haproxy >/dev/null 2>&1") != 0) return 0;
  UniqueFd probe = Listen(port);  // a free port, released for haproxy
  probe.Reset();
  char dir_template[] = "/tmp/garuda-bench-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) return 0;
  *dir = dir_template;
  const std::string config = absl::StrCat(*dir, "/haproxy.cfg");
  if (!WriteFileAtomically(config,
                           absl::StrCat("global\n  maxconn 64\n  tune.bufsize 262144\n"
                                        "defaults\n  mode tcp\n  option splice-auto\n"
                                        "  timeout connect 5s\n  timeout client 60s\n"
                                        "  timeout server 60s\n"
                                        "listen relay\n  bind 127.0.0.1:",
                                        *port, "\n  server origin 127.0.0.1:", origin, "\n"),
                           0600)
           .ok()) {
    return 0;
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execlp("haproxy", "haproxy", "-q", "-db", "-f", config.c_str(), nullptr);
    ::_exit(127);
  }
  // Ready once it accepts (within 5 s).
  for (int i = 0; i < 500; ++i) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in to = {};
    to.sin_family = AF_INET;
    to.sin_port = htons(*port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) == 0) return pid;
    if (::waitpid(pid, nullptr, WNOHANG) == pid) return 0;
    struct pollfd none = {-1, 0, 0};
    ::poll(&none, 0, 10);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return 0;
}

// MB/s of each round of one download through each path, alternating.
struct Downloads {
  std::vector<double> rates[3];
};

Downloads Download(const char* target, size_t megabytes, const uint16_t ports[3], uint16_t origin,
                   bool with_haproxy) {
  Downloads result;
  for (int round = 0; round < kRounds; ++round) {
    for (int path = 0; path < (with_haproxy ? 3 : 2); ++path) {
      auto start = Clock::now();
      size_t got = Request(static_cast<Path>(path), ports[path], origin, target);
      double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      if (got < (megabytes << 20)) {
        std::fprintf(stderr, "a download ended short: %zu bytes\n", got);
        std::exit(1);
      }
      result.rates[path].push_back(got / seconds / (1 << 20));
    }
  }
  return result;
}

double Best(std::vector<double> values) {
  return *std::max_element(values.begin(), values.end());
}

// Two lines: the median of each path, then the best of each, with each
// relay's share of direct.
void PrintDownloads(const char* what, const Downloads& d, bool with_haproxy) {
  const std::pair<const char*, double (*)(std::vector<double>)> stats[] = {{"median", Median},
                                                                           {"best", Best}};
  for (const auto& [name, stat] : stats) {
    const double direct = stat(d.rates[0]), proxy = stat(d.rates[1]);
    std::printf("  %-9s %-7s direct %6.0f MB/s   proxy %6.0f MB/s   %5.1f %% of direct",
                name == stats[0].first ? what : "", name, direct, proxy, 100 * proxy / direct);
    if (with_haproxy) {
      const double haproxy = stat(d.rates[2]);
      std::printf("   haproxy %6.0f MB/s   %5.1f %%", haproxy, 100 * haproxy / direct);
    }
    std::printf("\n");
  }
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

  uint16_t haproxy_port = 0;
  std::string haproxy_dir;  // its configuration, removed at the end
  const pid_t haproxy = StartHaproxy(origin_port, &haproxy_port, &haproxy_dir);
  std::printf(
      "netproxy bench: %zu MB download, %d requests, the real garuda-stager proxy, "
      "%d alternating rounds%s\n",
      megabytes, requests, kRounds,
      haproxy ? ", haproxy beside it" : " (install haproxy to see a well-known relay beside it)");
  const uint16_t ports[3] = {origin_port, proxy_port, haproxy_port};
  const double cpu_before = CpuSeconds((*proxy)->pid());
  Downloads loopback = Download("/big", megabytes, ports, origin_port, haproxy != 0);
  const double proxy_cpu = (CpuSeconds((*proxy)->pid()) - cpu_before) / kRounds;
  PrintDownloads("download", loopback, haproxy != 0);
  std::printf("  %-9s goal: median through the proxy >= 80 %% of direct\n", "");
  std::printf("  proxy CPU  %.3f s per %zu MB download (user + system)\n", proxy_cpu, megabytes);
  Downloads paced = Download("/paced", megabytes, ports, origin_port, haproxy != 0);
  PrintDownloads(absl::StrCat(kPacedMBps, "MB/s").c_str(), paced, haproxy != 0);
  if (haproxy) {
    ::kill(haproxy, SIGTERM);
    ::waitpid(haproxy, nullptr, 0);
  }
  if (!haproxy_dir.empty()) {
    ::unlink(absl::StrCat(haproxy_dir, "/haproxy.cfg").c_str());
    ::rmdir(haproxy_dir.c_str());
  }
  // Latency: a new connection per request, interleaved.
  std::vector<double> times[2];
  for (int i = 0; i < requests; ++i) {
    for (int path = 0; path < 2; ++path) {
      auto start = Clock::now();
      Request(static_cast<Path>(path), ports[path], origin_port, "/small");
      times[path].push_back(
          std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
  }
  double direct = Median(times[0]), proxied = Median(times[1]);
  std::printf(
      "  request    direct %8.1f us      proxy %8.1f us      +%.1f us per request (goal < 1000)\n",
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
