// The network by allow-list end to end (issue 21, point 4), against the real
// garuda-stager and curl, loopback only: an HTTP origin in this process and
// an HTTPS one (openssl s_server, self-signed), both on every address of
// the host, and the proxy's test name map (allowed.test, denied.test,
// other.test -> 127.0.0.1). Each refusal has its negative control.
#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "sandbox/sandbox.h"
#include "tests/netproxy/origin.h"

namespace garuda {
namespace {

// The host's first non-loopback IPv4 address ("" when it has none).
std::string HostAddress() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string found;
  for (ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET) continue;
    auto* in = reinterpret_cast<sockaddr_in*>(entry->ifa_addr);
    if ((ntohl(in->sin_addr.s_addr) >> 24) == 127) continue;
    char text[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    found = text;
    break;
  }
  ::freeifaddrs(list);
  return found;
}

class AllowListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "netXXXXXX");
    root_ = ::mkdtemp(templ.data());
    project_ = JoinPath(root_, "project");
    home_ = JoinPath(root_, "home");
    etc_ = JoinPath(root_, "etc");
    for (const std::string& dir : {project_, home_, etc_}) {
      ASSERT_TRUE(MakeDirectories(dir, 0755).ok());
    }
    ::setenv("HOME", home_.c_str(), 1);
    ::setenv("GARUDA_MANAGED_POLICY_DIR", etc_.c_str(), 1);
    ::setenv("GARUDA_TEST_PROXY_NAME_MAP",
             "allowed.test=127.0.0.1,denied.test=127.0.0.1,other.test=127.0.0.1", 1);
    ::unsetenv("GARUDA_TEST_PROXY_ALLOW_EVERYTHING");
    for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy",
                             "https_proxy", "all_proxy"}) {
      ::unsetenv(name);
    }
    stager_ = JoinPath(std::getenv("TEST_SRCDIR"),
                       "garuda/cmd/garuda-stager/garuda-stager");
  }

  void PersonSettings(const std::string& sandbox_json) {
    Write(home_ + "/.garuda/settings.json",
          absl::StrCat(R"({"sandbox":)", sandbox_json, "}"));
  }
  std::string AllowList() {
    return absl::StrCat(R"({"allowedDomains":["allowed.test"],)",
                        R"("deniedDomains":["denied.test"],"allowedPorts":[)",
                        origin_.port(), ", ", tls_port_ ? tls_port_ : 1, "]}");
  }
  void Write(const std::string& path, const std::string& text) {
    ASSERT_TRUE(MakeDirectories(Dirname(path), 0755).ok());
    ASSERT_TRUE(WriteFileAtomically(path, text, 0644).ok());
  }
  RunResult Run(const std::string& script, std::vector<std::string> flags = {}) {
    RunOptions options;
    options.argv = {stager_, "run", "--project", project_, "--mode", "direct"};
    options.argv.insert(options.argv.end(), flags.begin(), flags.end());
    for (const char* arg : {"--", "/bin/sh", "-c"}) options.argv.push_back(arg);
    options.argv.push_back(script);
    options.capture_output = true;
    options.wall_time_ms = 60000;
    auto result = RunOnHost(options, project_);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : RunResult();
  }
  std::string Curl(const std::string& url, const std::string& extra = "") {
    return absl::StrCat("curl -sS -m 10 ", extra, " ", url);
  }
  std::string Url(const std::string& host) {
    return absl::StrCat("http://", host, ":", origin_.port(), "/");
  }

  // openssl s_server with a fresh self-signed certificate for allowed.test.
  void StartTls() {
    std::string key = root_ + "/key.pem", cert = root_ + "/cert.pem";
    std::string make = absl::StrCat(
        "openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=allowed.test -days 1 "
        "-keyout ", key, " -out ", cert, " 2>/dev/null");
    ASSERT_EQ(std::system(make.c_str()), 0);
    UniqueFd probe(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    ::bind(probe.get(), reinterpret_cast<sockaddr*>(&address), sizeof address);
    socklen_t length = sizeof address;
    ::getsockname(probe.get(), reinterpret_cast<sockaddr*>(&address), &length);
    tls_port_ = ntohs(address.sin_port);
    probe.Reset();
    tls_pid_ = ::fork();
    if (tls_pid_ == 0) {
      std::string port = std::to_string(tls_port_);
      int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 0);
      ::dup2(null, 1);
      ::dup2(null, 2);
      ::execlp("openssl", "openssl", "s_server", "-quiet", "-www", "-accept",
               port.c_str(), "-cert", cert.c_str(), "-key", key.c_str(), nullptr);
      ::_exit(127);
    }
    // Ready when it accepts (a real wait with a deadline).
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      UniqueFd client(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_in to = {};
      to.sin_family = AF_INET;
      to.sin_port = htons(tls_port_);
      to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(client.get(), reinterpret_cast<sockaddr*>(&to), sizeof to) == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL() << "openssl s_server did not start";
  }
  void TearDown() override {
    if (tls_pid_ > 0) {
      ::kill(tls_pid_, SIGKILL);
      ::waitpid(tls_pid_, nullptr, 0);
    }
  }

  testing::Origin origin_;
  uint16_t tls_port_ = 0;
  pid_t tls_pid_ = -1;
  std::string root_, project_, home_, etc_, stager_;
};

TEST_F(AllowListTest, AnAllowedNameIsReachedThroughTheProxy) {
  PersonSettings(AllowList());
  RunResult ran = Run(Curl(Url("allowed.test")));
  EXPECT_EQ(ran.exit_code, 0) << ran.stderr_data;
  EXPECT_EQ(ran.stdout_data, "hello from origin\n");
  EXPECT_EQ(origin_.requests(), 1);
  // Control: without the allow list the same command has no network at all.
  PersonSettings("{}");
  ran = Run(Curl(Url("allowed.test")));
  EXPECT_NE(ran.exit_code, 0);
  EXPECT_EQ(origin_.requests(), 1);
}

TEST_F(AllowListTest, StagedCommandsGoThroughTheProxyToo) {
  PersonSettings(AllowList());
  RunOptions options;
  options.argv = {stager_, "run", "--project", project_, "--mode", "staged",
                  "--", "/bin/sh", "-c",
                  Curl(Url("allowed.test")) + "; " + Curl(Url("other.test"))};
  options.capture_output = true;
  options.wall_time_ms = 60000;
  auto ran = RunOnHost(options, project_);
  ASSERT_TRUE(ran.ok()) << ran.status();
  EXPECT_TRUE(absl::StrContains(ran->stderr_data, "hello from origin"))
      << ran->stderr_data;
  EXPECT_TRUE(absl::StrContains(ran->stderr_data, "network: refused other.test"));
  EXPECT_EQ(origin_.requests(), 1);
}

TEST_F(AllowListTest, HttpsIsTunnelledAndSocksWorksToo) {
  StartTls();
  PersonSettings(AllowList());
  RunResult ran = Run(absl::StrCat(
      Curl(absl::StrCat("https://allowed.test:", tls_port_, "/"), "-k -o /dev/null -w '%{http_code}\\n'"),
      "; ", Curl(Url("allowed.test"), "--proxy socks5h://127.0.0.1:3128")));
  EXPECT_EQ(ran.exit_code, 0) << ran.stderr_data;
  EXPECT_EQ(ran.stdout_data, "200\nhello from origin\n");
}

TEST_F(AllowListTest, DeniedAndUnlistedNamesAreRefusedWithTheReason) {
  PersonSettings(AllowList());
  RunResult ran = Run(absl::StrCat(Curl(Url("denied.test"), "-i"), "; ",
                                   Curl(Url("other.test"), "-i"), "; ",
                                   Curl(absl::StrCat("https://other.test:", origin_.port(), "/"))));
  EXPECT_EQ(origin_.requests(), 0) << ran.stdout_data;
  // The command's output shows the 403 and its body...
  EXPECT_TRUE(absl::StrContains(ran.stdout_data, "HTTP/1.1 403 Forbidden"));
  EXPECT_TRUE(absl::StrContains(ran.stdout_data, "(in sandbox.deniedDomains)"));
  // ...and after it the person reads one line per refused host.
  EXPECT_TRUE(absl::StrContains(
      ran.stderr_data,
      absl::StrCat("network: refused denied.test:", origin_.port(),
                   " (in sandbox.deniedDomains)")))
      << ran.stderr_data;
  EXPECT_TRUE(absl::StrContains(
      ran.stderr_data,
      absl::StrCat("network: refused other.test:", origin_.port(),
                   " (not in sandbox.allowedDomains)")));
  // A port outside sandbox.allowedPorts, on an allowed name.
  ran = Run(Curl("http://allowed.test:22/"));
  EXPECT_TRUE(absl::StrContains(ran.stderr_data,
                                "port 22 is not in sandbox.allowedPorts"))
      << ran.stderr_data;
}

TEST_F(AllowListTest, DirectConnectionsDnsAndUdpFailButNotWithTheFullNetwork) {
  std::string host = HostAddress();
  if (host.empty()) GTEST_SKIP() << "no non-loopback address on this host";
  const std::string script = absl::StrCat(
      Curl(absl::StrCat("http://", host, ":", origin_.port(), "/"), "--noproxy '*'"),
      " && echo direct-ok; (echo x > /dev/udp/", host, "/53) 2>/dev/null && echo udp-ok;"
      " getent hosts example.com >/dev/null && echo dns-ok; true");
  PersonSettings(AllowList());
  RunResult ran = Run(absl::StrCat("exec bash -c '", script, "'"));
  EXPECT_FALSE(absl::StrContains(ran.stdout_data, "direct-ok")) << ran.stdout_data;
  EXPECT_FALSE(absl::StrContains(ran.stdout_data, "udp-ok"));
  EXPECT_FALSE(absl::StrContains(ran.stdout_data, "dns-ok"));
  EXPECT_EQ(origin_.requests(), 0);
  // Control: with sandbox.network true the same commands reach the server.
  PersonSettings(R"({"network":true})");
  ran = Run(absl::StrCat("exec bash -c '", script, "'"));
  EXPECT_TRUE(absl::StrContains(ran.stdout_data, "direct-ok")) << ran.stderr_data;
  EXPECT_TRUE(absl::StrContains(ran.stdout_data, "udp-ok"));
  EXPECT_EQ(origin_.requests(), 1);
}

TEST_F(AllowListTest, AProjectFileCannotAddADomain) {
  PersonSettings(AllowList());
  Write(project_ + "/.garuda/settings.json",
        R"({"sandbox":{"allowedDomains":["allowed.test","other.test"]}})");
  RunResult ran = Run(Curl(Url("other.test")));
  EXPECT_EQ(origin_.requests(), 0);
  EXPECT_TRUE(absl::StrContains(ran.stderr_data,
                                "sandbox.allowedDomains \"other.test\" is ignored"))
      << ran.stderr_data;
  EXPECT_TRUE(absl::StrContains(ran.stderr_data, "network: refused other.test"));
  // Control: the person's own settings can add it.
  PersonSettings(absl::StrCat(R"({"allowedDomains":["allowed.test","other.test"],)",
                              R"("allowedPorts":[)", origin_.port(), "]}"));
  ran = Run(Curl(Url("other.test")));
  EXPECT_EQ(ran.stdout_data, "hello from origin\n") << ran.stderr_data;
}

TEST_F(AllowListTest, BadInputIsRefusedAndTheProxyGoesOn) {
  PersonSettings(AllowList());
  std::string big(40000, 'a');
  RunResult ran = Run(absl::StrCat(
      "exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/3128; printf \"NOT A REQUEST\\r\\n\\r\\n\" >&3;"
      " head -c 12 <&3; echo; exec 3<>/dev/tcp/127.0.0.1/3128;"
      " printf \"GET http://allowed.test/ HTTP/1.1\\r\\nX: ", big, "\\r\\n\\r\\n\" >&3 2>/dev/null;"
      " head -c 12 <&3; echo; ", Curl(Url("allowed.test")), "'"));
  EXPECT_EQ(ran.stdout_data, "HTTP/1.1 400\nHTTP/1.1 431\nhello from origin\n")
      << ran.stderr_data;
  EXPECT_EQ(origin_.requests(), 1);
}

// The parent of `pid`, or 0.
pid_t ParentOf(pid_t pid) {
  auto stat = ReadFileToString(absl::StrCat("/proc/", pid, "/stat"));
  if (!stat.ok()) return 0;
  size_t at = stat->rfind(')');
  if (at == std::string::npos) return 0;
  int parent = 0;
  return std::sscanf(stat->c_str() + at + 2, "%*c %d", &parent) == 1 ? parent : 0;
}

// The proxy of a stager this test started (another test's proxy, running at
// the same time, is never it), or 0.
pid_t FindProxy() {
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return 0;
  pid_t found = 0;
  while (struct dirent* entry = ::readdir(proc)) {
    const pid_t pid = std::atoi(entry->d_name);
    if (pid <= 0) continue;
    auto cmdline = ReadFileToString(absl::StrCat("/proc/", pid, "/cmdline"));
    if (!cmdline.ok()) continue;
    std::vector<std::string> args = absl::StrSplit(*cmdline, '\0');
    if (args.size() < 3 || args[1] != "proxy" || !absl::StartsWith(args[2], "--channel-fd=")) {
      continue;
    }
    pid_t ancestor = pid;
    for (int depth = 0; depth < 4 && ancestor > 1; ++depth) {
      ancestor = ParentOf(ancestor);
      if (ancestor == ::getpid()) found = pid;
    }
    if (found != 0) break;
  }
  ::closedir(proc);
  return found;
}

// A proxy killed while the command runs: the command's connections fail
// (its listener died with the proxy), nothing reaches the origin, and the
// stager says what happened. Control: the same run without the kill.
TEST_F(AllowListTest, AKilledProxyFailsClosed) {
  PersonSettings(AllowList());
  for (bool kill : {false, true}) {
    SCOPED_TRACE(kill ? "killed" : "control");
    ::unlink((project_ + "/go").c_str());
    RunOptions options;
    options.argv = {stager_, "run", "--project", project_, "--mode", "direct",
                    "--", "/bin/sh", "-c",
                    "while [ ! -e go ]; do sleep 0.01; done; " +
                        Curl(Url("allowed.test"))};
    options.capture_output = true;
    options.wall_time_ms = 60000;
    RunResult ran;
    std::thread stager([&] { ran = *RunOnHost(options, project_); });
    pid_t proxy = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while ((proxy = FindProxy()) == 0 && std::chrono::steady_clock::now() < deadline) {
    }
    EXPECT_GT(proxy, 0);
    if (kill && proxy > 0) {
      ::kill(proxy, SIGKILL);
      while (::kill(proxy, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
        // until it is gone (a zombie of the stager's still answers kill 0:
        // its /proc entry says so)
        auto state = ReadFileToString(absl::StrCat("/proc/", proxy, "/stat"));
        if (!state.ok() || absl::StrContains(*state, ") Z ")) break;
      }
    }
    Write(project_ + "/go", "");
    stager.join();
    if (kill) {
      EXPECT_EQ(origin_.requests(), 1) << ran.stdout_data;
      EXPECT_NE(ran.exit_code, 0);
      EXPECT_TRUE(absl::StrContains(ran.stderr_data, "garuda-stager proxy"))
          << ran.stderr_data;
    } else {
      EXPECT_EQ(ran.stdout_data, "hello from origin\n") << ran.stderr_data;
      EXPECT_EQ(origin_.requests(), 1);
    }
  }
}

TEST_F(AllowListTest, StrictStartCheckFailsWhenTheProxyAllowsEverything) {
  PersonSettings(AllowList());
  Write(etc_ + "/policy.json", R"({"profile":"strict"})");
  RunResult ran = Run(Curl(Url("allowed.test")));
  EXPECT_EQ(ran.exit_code, 0) << ran.stderr_data;
  EXPECT_TRUE(absl::StrContains(ran.stderr_data, "enforcement proven at start"))
      << ran.stderr_data;
  // The seam: a proxy that lets every host through fails the check.
  ::setenv("GARUDA_TEST_PROXY_ALLOW_EVERYTHING", "1", 1);
  ran = Run(Curl(Url("allowed.test")));
  EXPECT_EQ(ran.exit_code, 125);
  EXPECT_TRUE(absl::StrContains(ran.stderr_data,
                                "strict profile's network check failed"))
      << ran.stderr_data;
  EXPECT_TRUE(absl::StrContains(ran.stderr_data, "did not refuse"));
  EXPECT_EQ(origin_.requests(), 1);
  // Control: the same seam without strict runs (no check is made).
  ::unlink((etc_ + "/policy.json").c_str());
  ran = Run(Curl(Url("allowed.test")));
  EXPECT_EQ(ran.exit_code, 0) << ran.stderr_data;
}

}  // namespace
}  // namespace garuda
