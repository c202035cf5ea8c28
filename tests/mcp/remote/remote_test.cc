// A remote MCP server reached as garuda-agent reaches one (docs/mcp.md,
// "Remote servers"): garuda-stager serve makes the server's own proxy and
// hands over connected sockets (ConnectMcpProxy); the client speaks
// Streamable HTTP through them (ConnectRemoteMcpServer). The origin is a
// plain-HTTP MCP server of this test on loopback, named allowed.test and
// other.test by the proxy's test name map (GARUDA_TEST_PROXY_NAME_MAP).
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/test_tree.h"
#include "lib/ipc/helper_process.h"
#include "lib/mcp/client.h"
#include "lib/staging/client.h"
#include "lib/staging/mcp_remote_client.h"
#include "proto/settings.pb.h"

namespace garuda {
namespace {

using ::garuda::testing::NewTempDir;
using ::google::protobuf::Struct;
using ::google::protobuf::Value;

constexpr char kToken[] = "Bearer remote-test-token-7f3a";

std::string Runfile(const std::string& path) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/garuda/", path);
}

std::string Json(const Value& value) {
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(value, &out);
  return out;
}

// A Streamable HTTP MCP server in its simplest form: one JSON answer per
// POST, "Connection: close". Its one tool, `echo_request`, answers with the
// body of the request that called it, so a test sees everything the client
// put into a message. Every request (head and body) is kept.
class Origin {
 public:
  Origin() {
    fd_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_.get(), reinterpret_cast<sockaddr*>(&address),
                     sizeof address),
              0);
    EXPECT_EQ(::listen(fd_.get(), 16), 0);
    socklen_t size = sizeof address;
    ::getsockname(fd_.get(), reinterpret_cast<sockaddr*>(&address), &size);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~Origin() {
    stop_ = true;
    ::shutdown(fd_.get(), SHUT_RDWR);
    thread_.join();
  }
  uint16_t port() const { return port_; }
  int connections() const { return connections_; }
  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void Serve() {
    while (!stop_) {
      struct pollfd p = {fd_.get(), POLLIN, 0};
      if (::poll(&p, 1, 100) != 1) continue;
      UniqueFd client(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!client) continue;
      ++connections_;
      Answer(client.get());
    }
  }

  void Answer(int fd) {
    std::string in;
    size_t head_end = std::string::npos;
    size_t length = 0;
    char chunk[4096];
    while (true) {
      if (head_end == std::string::npos) {
        head_end = in.find("\r\n\r\n");
        if (head_end != std::string::npos) {
          for (absl::string_view line :
               absl::StrSplit(in.substr(0, head_end), "\r\n")) {
            if (absl::StartsWithIgnoreCase(line, "content-length:")) {
              (void)absl::SimpleAtoi(
                  absl::StripAsciiWhitespace(line.substr(15)), &length);
            }
          }
        }
      }
      if (head_end != std::string::npos && in.size() >= head_end + 4 + length) {
        break;
      }
      struct pollfd p = {fd, POLLIN, 0};
      if (::poll(&p, 1, 10000) != 1) return;
      ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n <= 0) return;
      in.append(chunk, static_cast<size_t>(n));
    }
    const std::string body = in.substr(head_end + 4, length);
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(in);
    }
    Value message;
    std::string out = "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n";
    if (google::protobuf::util::JsonStringToMessage(body, &message).ok() &&
        message.struct_value().fields().count("id") > 0) {
      const auto& fields = message.struct_value().fields();
      const std::string method = fields.at("method").string_value();
      Value answer;
      auto& a = *answer.mutable_struct_value()->mutable_fields();
      a["jsonrpc"].set_string_value("2.0");
      a["id"] = fields.at("id");
      Value result;
      std::string json;
      if (method == "initialize") {
        json = R"({"protocolVersion":"2025-06-18","capabilities":{"tools":{}},)"
               R"("serverInfo":{"name":"origin","version":"1"}})";
      } else if (method == "tools/list") {
        json = R"({"tools":[{"name":"echo_request","description":"echoes)"
               R"( the request","inputSchema":{"type":"object"}}]})";
      } else if (method == "tools/call") {
        Value text;
        text.set_string_value(body);
        json = absl::StrCat(R"({"content":[{"type":"text","text":)", Json(text),
                            "}]}");
      }
      if (json.empty()) {
        json = R"({"code":-32601,"message":"method not found"})";
        (void)google::protobuf::util::JsonStringToMessage(json, &a["error"]);
      } else {
        (void)google::protobuf::util::JsonStringToMessage(json, &a["result"]);
      }
      const std::string reply = Json(answer);
      out = absl::StrCat(
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
          "Content-Length: ",
          reply.size(), "\r\n\r\n", reply);
    } else {
      absl::StrAppend(&out, "\r\n");
    }
    absl::StrAppend(&out, "");
    (void)::write(fd, out.data(), out.size());
  }

  UniqueFd fd_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::mutex mu_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

class RemoteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = NewTempDir("remote");
    project_ = JoinPath(root_, "project");
    const std::string home = JoinPath(root_, "home");
    const std::string etc = JoinPath(root_, "etc");
    for (const std::string& dir : {project_, home, etc}) {
      ASSERT_TRUE(MakeDirectories(dir, 0755).ok());
    }
    ::setenv("HOME", home.c_str(), 1);
    ::setenv("GARUDA_MANAGED_POLICY_DIR", etc.c_str(), 1);
    ::setenv("GARUDA_TEST_PROXY_NAME_MAP",
             "allowed.test=127.0.0.1,other.test=127.0.0.1", 1);
    ::unsetenv("GARUDA_TEST_PROXY_ALLOW_EVERYTHING");
    ::unsetenv("GARUDA_TEST_ONLY_PRETEND_NO_SANDBOX");
    for (const char* name : {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                             "http_proxy", "https_proxy", "all_proxy"}) {
      ::unsetenv(name);
    }
    // The origin's port is the one the proxies may connect to.
    ASSERT_TRUE(MakeDirectories(JoinPath(home, ".garuda"), 0700).ok());
    ASSERT_TRUE(
        WriteFileAtomically(JoinPath(home, ".garuda/settings.json"),
                            absl::StrCat(R"({"sandbox":{"allowedPorts":[)",
                                         origin_.port(), "]}}"),
                            0644)
            .ok());

    ipc::HelperOptions options;
    options.argv = {Runfile("cmd/garuda-stager/garuda-stager"),
                    "serve",
                    "--channel-fd=3",
                    "--project",
                    project_,
                    "--mode",
                    "direct",
                    "--session-id",
                    "remote"};
    absl::StatusOr<std::unique_ptr<ipc::HelperProcess>> helper =
        ipc::HelperProcess::Spawn(options);
    ASSERT_TRUE(helper.ok()) << helper.status();
    stager_ = *std::move(helper);
    service_ = StagerChannelClient(stager_.get());
  }
  void TearDown() override {
    if (service_) (void)service_->End();
    if (stager_) stager_->Stop().IgnoreError();
  }

  McpServer Server(const std::string& host, std::vector<std::string> allowed) {
    McpServer server;
    server.set_name("remote");
    server.set_source(McpServer::USER);
    server.set_source_file("/home/someone/.garuda/settings.json");
    McpServerSettings* d = server.mutable_definition();
    d->set_url(absl::StrCat("http://", host, ":", origin_.port(), "/mcp"));
    (*d->mutable_headers())["Authorization"] = kToken;
    for (const std::string& entry : allowed) d->add_allowed_domains(entry);
    return server;
  }

  // CONNECT host:port at the server's proxy, as libcurl sends it: the
  // proxy's status line.
  std::string ConnectThrough(const McpServer& server, const std::string& host) {
    absl::StatusOr<stager::McpProxyConnected> proxy =
        service_->ConnectMcpProxy(server);
    EXPECT_TRUE(proxy.ok()) << proxy.status();
    if (!proxy.ok()) return "";
    auto fd = std::make_unique<UniqueFd>(
        ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address = {};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, proxy->address().data(),
                proxy->address().size());
    EXPECT_EQ(::connect(fd->get(), reinterpret_cast<sockaddr*>(&address),
                        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) +
                                               proxy->address().size())),
              0);
    const std::string request =
        absl::StrCat("CONNECT ", host, ":", origin_.port(),
                     " HTTP/1.1\r\nHost: ", host, "\r\n\r\n");
    EXPECT_EQ(::write(fd->get(), request.data(), request.size()),
              static_cast<ssize_t>(request.size()));
    std::string answer;
    char chunk[512];
    while (answer.find("\r\n") == std::string::npos) {
      struct pollfd p = {fd->get(), POLLIN, 0};
      if (::poll(&p, 1, 10000) != 1) break;
      ssize_t n = ::read(fd->get(), chunk, sizeof chunk);
      if (n <= 0) break;
      answer.append(chunk, static_cast<size_t>(n));
    }
    return answer.substr(0, answer.find("\r\n"));
  }

  Origin origin_;
  std::string root_, project_;
  std::unique_ptr<ipc::HelperProcess> stager_;
  std::unique_ptr<CommandService> service_;
};

TEST_F(RemoteTest, AnAllowedServerIsReachedItsToolsListedItsHeadersKept) {
  const McpServer server = Server("allowed.test", {"allowed.test"});
  absl::StatusOr<std::unique_ptr<mcp::Transport>> transport =
      ConnectRemoteMcpServer(service_.get(), server);
  ASSERT_TRUE(transport.ok()) << transport.status();
  mcp::ConnectOptions options;
  options.root_dir = project_;
  options.discover_timeout = absl::Seconds(2);
  absl::StatusOr<std::unique_ptr<mcp::Client>> client =
      mcp::Client::Connect("remote", *std::move(transport), options);
  ASSERT_TRUE(client.ok()) << client.status();
  auto tools = (*client)->ListTools();
  ASSERT_TRUE(tools.ok()) << tools.status();
  ASSERT_EQ(tools->tools.size(), 1u) << tools->problems.size();
  EXPECT_EQ(tools->tools[0].name, "echo_request");
  Value arguments;
  arguments.mutable_struct_value();
  auto called = (*client)->CallTool("echo_request", arguments, {});
  ASSERT_TRUE(called.ok()) << called.status();
  // The message the origin got is in the result: the call reached it.
  EXPECT_TRUE(absl::StrContains(called->text, "echo_request")) << called->text;

  // The headers went to the origin, with every request...
  const std::vector<std::string> requests = origin_.requests();
  ASSERT_GE(requests.size(), 3u);
  for (const std::string& request : requests) {
    EXPECT_TRUE(
        absl::StrContains(request, absl::StrCat("Authorization: ", kToken)))
        << request;
  }
  // ...and never into a message: not in what the tool call returned (the
  // whole body the client sent), the tools or the server's description.
  EXPECT_FALSE(absl::StrContains(called->text, "remote-test-token"));
  for (const mcp::Tool& tool : tools->tools) {
    EXPECT_FALSE(absl::StrContains(tool.description, "remote-test-token"));
  }
  EXPECT_FALSE(absl::StrContains(Json((*client)->server_info().capabilities),
                                 "remote-test-token"));
}

TEST_F(RemoteTest, ItsProxyRefusesAHostOutsideAllowedDomains) {
  const McpServer server = Server("allowed.test", {"allowed.test"});
  const int before = origin_.connections();
  const std::string refused = ConnectThrough(server, "other.test");
  EXPECT_TRUE(absl::StrContains(refused, " 403")) << refused;
  EXPECT_EQ(origin_.connections(), before);
  // Negative control: the same request for the allowed host arrives.
  const std::string allowed = ConnectThrough(server, "allowed.test");
  EXPECT_TRUE(absl::StrContains(allowed, " 200")) << allowed;
  for (int i = 0; i < 100 && origin_.connections() == before; ++i) {
    ::usleep(50 * 1000);
  }
  EXPECT_EQ(origin_.connections(), before + 1);
}

TEST_F(RemoteTest, TheStagerRefusesAUrlWhoseHostIsNotAllowed) {
  absl::StatusOr<stager::McpProxyConnected> fd =
      service_->ConnectMcpProxy(Server("other.test", {"allowed.test"}));
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.status().code(), absl::StatusCode::kFailedPrecondition);
  for (const char* part : {"\"remote\"", "/home/someone/.garuda/settings.json",
                           "mcpServers.remote.allowedDomains", "other.test"}) {
    EXPECT_TRUE(absl::StrContains(fd.status().message(), part)) << fd.status();
  }
  fd = service_->ConnectMcpProxy(Server("allowed.test", {}));
  ASSERT_FALSE(fd.ok());
  EXPECT_TRUE(absl::StrContains(fd.status().message(),
                                "mcpServers.remote.allowedDomains"))
      << fd.status();
  // Negative control: listed, it connects.
  EXPECT_TRUE(
      service_->ConnectMcpProxy(Server("other.test", {"other.test"})).ok());
}

}  // namespace
}  // namespace garuda
