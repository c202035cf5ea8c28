// Real processes: LockDownAgent happens in a forked child, since it cannot be
// undone; every check has its negative control (the same child without the
// lockdown succeeds).
#include "lib/agent/agent_lockdown.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/lockdown/landlock.h"
#include "lib/lockdown/test_child.h"
#include "lib/provider/http.h"
#include "tests/providers/scripted_server.h"

namespace garuda {
namespace agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::map<std::string, std::string> ParseResults(const std::string& text) {
  std::map<std::string, std::string> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::pair<std::string, std::string> kv = absl::StrSplit(line, '=');
    out[kv.first] = kv.second;
  }
  return out;
}

std::string TryWrite(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoName(fd);
  bool wrote = write(fd, "x\n", 2) == 2;
  close(fd);
  return wrote ? "0" : ErrnoName(-1);
}

std::string TryConnect(int port) {
  int tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (tcp < 0) return ErrnoName(tcp);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  int rc = connect(tcp, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  close(tcp);
  return ErrnoName(rc);
}

class AgentLockdownTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TEST_TMPDIR");
    ASSERT_NE(tmp, nullptr);
    static int counter = 0;
    root_ = JoinPath(tmp, absl::StrCat("agent-", getpid(), "-", counter++));
    project_ = JoinPath(root_, "project");
    home_ = JoinPath(root_, "home");
    audit_ = JoinPath(home_, ".garuda/audit/project-1234");
    session_ = JoinPath(home_, ".garuda/sessions/s1");
    history_ = JoinPath(home_, ".garuda/history");
    ASSERT_TRUE(MakeDirectories(project_, 0700).ok());
    ASSERT_TRUE(MakeDirectories(audit_, 0700).ok());
    ASSERT_TRUE(
        WriteFileAtomically(JoinPath(project_, "main.c"), "int x;\n", 0600)
            .ok());

    absl::StatusOr<UniqueFd> allowed = ListenOnLoopback(&provider_port_);
    ASSERT_TRUE(allowed.ok()) << allowed.status();
    provider_listener_ = std::move(*allowed);
    absl::StatusOr<UniqueFd> other = ListenOnLoopback(&other_port_);
    ASSERT_TRUE(other.ok()) << other.status();
    other_listener_ = std::move(*other);
  }

  AgentLockdown Options() const {
    AgentLockdown options;
    options.session_dir = session_;
    options.history_path = history_;
    options.provider_url =
        absl::StrCat("http://127.0.0.1:", provider_port_, "/v1");
    options.getenv = [](const char*) -> const char* { return nullptr; };
    return options;
  }

  // What the child tries, one "name=result" line each ("0" or an errno).
  std::string Attempts(bool try_exec = true) const {
    std::string out;
    absl::StrAppend(
        &out, "write_project=", TryWrite(JoinPath(project_, "main.c")), "\n");
    absl::StrAppend(
        &out, "create_project=", TryWrite(JoinPath(project_, "new.c")), "\n");
    absl::StrAppend(
        &out, "write_audit=", TryWrite(JoinPath(audit_, "agent.jsonl")), "\n");
    absl::StrAppend(&out, "write_session=",
                    TryWrite(JoinPath(session_, "journal.jsonl")), "\n");
    absl::StrAppend(&out, "write_history=", TryWrite(history_), "\n");
    absl::StrAppend(&out, "connect_provider=", TryConnect(provider_port_),
                    "\n");
    absl::StrAppend(&out, "connect_other=", TryConnect(other_port_), "\n");
    int netlink = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
    absl::StrAppend(&out, "socket_netlink=", ErrnoName(netlink), "\n");
    if (netlink >= 0) close(netlink);
    int unix_socket = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    absl::StrAppend(&out, "socket_unix=", ErrnoName(unix_socket), "\n");
    if (unix_socket >= 0) close(unix_socket);

    pid_t pid = fork();
    if (pid == 0) _exit(0);
    if (pid > 0) waitpid(pid, nullptr, 0);
    absl::StrAppend(&out, "fork=", ErrnoName(pid), "\n");
    bool thread_ran = false;
    std::thread thread([&] { thread_ran = true; });
    thread.join();
    absl::StrAppend(&out, "thread=", thread_ran ? "0" : "failed", "\n");
    if (try_exec) {
      char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
      long rc = execve("/bin/true", argv, environ);  // returns on failure
      absl::StrAppend(&out, "execve=", ErrnoName(rc), "\n");
    }
    return out;
  }

  // In a child: LockDownAgent(options), then the attempts, parsed; a
  // failed lockdown is the entry "lockdown".
  std::map<std::string, std::string> AttemptsAfterLockdown(
      const AgentLockdown& options) {
    absl::StatusOr<std::string> result = RunInChild([&]() -> std::string {
      LockdownReport report;
      absl::Status status = LockDownAgent(options, &report);
      if (!status.ok()) return absl::StrCat("lockdown=", status.ToString());
      return absl::StrCat("summary=", report.summary, "\n", Attempts());
    });
    if (!result.ok()) return {{"lockdown", result.status().ToString()}};
    return ParseResults(*result);
  }

  std::string root_, project_, home_, audit_, session_, history_;
  int provider_port_ = 0, other_port_ = 0;
  UniqueFd provider_listener_, other_listener_;
};

TEST_F(AgentLockdownTest, WritesOnlyItsSessionAndTalksOnlyToTheProvider) {
  absl::StatusOr<int> abi = LandlockAbiVersion();
  ASSERT_TRUE(abi.ok()) << abi.status();
  std::map<std::string, std::string> got = AttemptsAfterLockdown(Options());
  ASSERT_EQ(got.count("lockdown"), 0u) << got["lockdown"];
  EXPECT_EQ(got["write_project"], "EACCES");
  EXPECT_EQ(got["create_project"], "EACCES");
  EXPECT_EQ(got["write_audit"], "EACCES");
  EXPECT_EQ(got["write_session"], "0");
  EXPECT_EQ(got["write_history"], "0");
  EXPECT_EQ(got["connect_provider"], "0");
  if (*abi >= 4) {
    EXPECT_EQ(got["connect_other"], "EACCES");
    EXPECT_THAT(got["summary"],
                HasSubstr(absl::StrCat("TCP only to port ", provider_port_)));
  } else {
    EXPECT_THAT(got["summary"], HasSubstr("not limited"));
  }
  EXPECT_EQ(got["socket_netlink"], "EPERM");
  EXPECT_EQ(got["socket_unix"], "0");
  EXPECT_EQ(got["fork"], "EPERM");
  EXPECT_EQ(got["thread"], "0");
  EXPECT_EQ(got["execve"], "EPERM");

  // The project and the audit folder are as they were.
  absl::StatusOr<std::string> main_c =
      ReadFileToString(JoinPath(project_, "main.c"));
  EXPECT_EQ(*main_c, "int x;\n");
  EXPECT_FALSE(ReadFileToString(JoinPath(audit_, "agent.jsonl")).ok());
  struct stat info;
  ASSERT_EQ(stat(history_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
}

TEST_F(AgentLockdownTest, NegativeControlWithoutLockdownEverythingWorks) {
  ASSERT_TRUE(MakeDirectories(session_, 0700).ok());
  absl::StatusOr<std::string> result =
      RunInChild([&]() -> std::string { return Attempts(false); });
  ASSERT_TRUE(result.ok()) << result.status();
  std::map<std::string, std::string> got = ParseResults(*result);
  EXPECT_EQ(got["write_project"], "0");
  EXPECT_EQ(got["create_project"], "0");
  EXPECT_EQ(got["write_audit"], "0");
  EXPECT_EQ(got["write_session"], "0");
  EXPECT_EQ(got["connect_provider"], "0");
  EXPECT_EQ(got["connect_other"], "0");
  EXPECT_EQ(got["socket_netlink"], "0");
  EXPECT_EQ(got["fork"], "0");
  // execve without the filter: in a child of its own, it runs /bin/true.
  absl::StatusOr<std::string> exec = RunInChild([]() -> std::string {
    pid_t pid = fork();
    if (pid == 0) {
      char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
      execve("/bin/true", argv, environ);
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "ran" : "failed";
  });
  ASSERT_TRUE(exec.ok()) << exec.status();
  EXPECT_EQ(*exec, "ran");
}

TEST_F(AgentLockdownTest, WithoutAModelNoNetworkAtAll) {
  AgentLockdown options = Options();
  options.provider_url.clear();
  std::map<std::string, std::string> got = AttemptsAfterLockdown(options);
  ASSERT_EQ(got.count("lockdown"), 0u) << got["lockdown"];
  EXPECT_EQ(got["connect_provider"], "EPERM");  // socket(AF_INET) refused
  EXPECT_EQ(got["socket_unix"], "0");
  EXPECT_THAT(got["summary"], HasSubstr("no network"));
}

// Fail closed: a kernel without Landlock (a faked probe) stops the lockdown
// before it changes anything; the token accepts it, and the report says so.
TEST_F(AgentLockdownTest, WithoutLandlockItFailsClosed) {
  std::map<std::string, std::string> refused;
  absl::StatusOr<std::string> result = RunInChild([&]() -> std::string {
    absl::Status status = agent_lockdown_internal::LockDownAgentWithProbe(
        Options(), nullptr, [] { return 0; });
    return absl::StrCat("status=", status.ToString(), "\n",
                        Attempts(/*try_exec=*/false));
  });
  ASSERT_TRUE(result.ok()) << result.status();
  refused = ParseResults(*result);
  EXPECT_THAT(refused["status"], HasSubstr("FAILED_PRECONDITION"));
  EXPECT_THAT(refused["status"], HasSubstr("Landlock"));
  // Nothing was applied: no seccomp filter either.
  EXPECT_EQ(refused["write_project"], "0");
  EXPECT_EQ(refused["fork"], "0");

  result = RunInChild([&]() -> std::string {
    AgentLockdown options = Options();
    options.accept_weaker_lockdown = "a test kernel";
    LockdownReport report;
    absl::Status status = agent_lockdown_internal::LockDownAgentWithProbe(
        options, &report, [] { return 0; });
    if (!status.ok()) return absl::StrCat("lockdown=", status.ToString());
    return absl::StrCat("summary=", report.summary, "\n", Attempts());
  });
  ASSERT_TRUE(result.ok()) << result.status();
  std::map<std::string, std::string> weaker = ParseResults(*result);
  ASSERT_EQ(weaker.count("lockdown"), 0u) << weaker["lockdown"];
  EXPECT_THAT(weaker["summary"], HasSubstr("no Landlock"));
  EXPECT_THAT(weaker["summary"], HasSubstr("a test kernel"));
  EXPECT_EQ(weaker["write_project"], "0");  // what the missing wall allows
  EXPECT_EQ(weaker["execve"], "EPERM");     // seccomp still holds
  EXPECT_EQ(weaker["fork"], "EPERM");
}

// libcurl after the lockdown: a streamed POST to the scripted provider, by
// name so that curl's resolver thread runs.
TEST_F(AgentLockdownTest, LibcurlStillReachesTheProvider) {
  provider::ProviderScript script;
  script.add_replies()->set_text("Hello after lockdown.");
  absl::StatusOr<std::unique_ptr<provider::testing::ScriptedServer>> server =
      provider::testing::ScriptedServer::Start(
          provider::testing::ServerKind::kOpenAi, script);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  absl::StatusOr<std::string> result = RunInChild([&]() -> std::string {
    provider::InitializeHttp();
    AgentLockdown options = Options();
    options.provider_url = absl::StrCat("http://localhost:", port, "/v1");
    absl::Status status = LockDownAgent(options, nullptr);
    if (!status.ok()) return absl::StrCat("lockdown=", status.ToString());
    provider::HttpRequest request;
    request.url =
        absl::StrCat("http://localhost:", port, "/v1/chat/completions");
    request.headers = {"Content-Type: application/json"};
    request.body = R"({"model":"m","stream":true,"messages":[]})";
    std::string body;
    provider::HttpOutcome outcome =
        provider::PostStreaming(request, provider::HttpOptions(), nullptr,
                                [&](absl::string_view bytes) {
                                  body.append(bytes.data(), bytes.size());
                                  return absl::OkStatus();
                                });
    return absl::StrCat(
        "completed=",
        outcome.kind == provider::HttpOutcome::Kind::kCompleted ? "yes" : "no",
        "\nstatus=", outcome.status_code, "\nerror=", outcome.network_error,
        "\nhello=", body.find("Hello") != std::string::npos ? "yes" : "no",
        "\n");
  });
  ASSERT_TRUE(result.ok()) << result.status();
  std::map<std::string, std::string> got = ParseResults(*result);
  ASSERT_EQ(got.count("lockdown"), 0u) << got["lockdown"];
  EXPECT_EQ(got["completed"], "yes") << got["error"];
  EXPECT_EQ(got["status"], "200");
  EXPECT_EQ(got["hello"], "yes");
}

TEST(ProviderTcpPortsTest, PortsOfTheUrlAndTheProxy) {
  auto none = [](const char*) -> const char* { return nullptr; };
  EXPECT_THAT(*ProviderTcpPorts("https://api.openai.com/v1", none),
              ElementsAre(443));
  EXPECT_THAT(*ProviderTcpPorts("http://localhost/v1", none), ElementsAre(80));
  EXPECT_THAT(*ProviderTcpPorts("http://127.0.0.1:11434/v1", none),
              ElementsAre(11434));
  EXPECT_THAT(*ProviderTcpPorts("http://user:pw@[::1]:8080/v1", none),
              ElementsAre(8080));
  auto proxy = [](const char* name) -> const char* {
    return std::string(name) == "HTTPS_PROXY" ? "proxy.local:3128" : nullptr;
  };
  EXPECT_THAT(*ProviderTcpPorts("https://api.anthropic.com", proxy),
              ElementsAre(443, 3128));
  // http_proxy only in lower case, as libcurl reads it.
  auto upper_http = [](const char* name) -> const char* {
    return std::string(name) == "HTTP_PROXY" ? "http://p:9" : nullptr;
  };
  EXPECT_THAT(*ProviderTcpPorts("http://h/v1", upper_http), ElementsAre(80));
  absl::StatusOr<std::vector<int>> bad = ProviderTcpPorts("ftp://h/", none);
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("ftp://h/"));
  EXPECT_FALSE(ProviderTcpPorts("http://h:99999/", none).ok());
}

TEST(LockDownAgentTest, RelativeSessionFolderIsAnError) {
  AgentLockdown options;
  options.session_dir = "sessions/s1";
  absl::Status status = LockDownAgent(options, nullptr);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("sessions/s1"));
}

}  // namespace
}  // namespace agent
}  // namespace garuda
