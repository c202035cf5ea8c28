// lib/mcp against the published servers (pinned in package-lock.json),
// started plainly: @modelcontextprotocol/server-everything (every protocol
// feature it has) and @modelcontextprotocol/server-filesystem.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/acp/json_rpc.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/mcp/client.h"
#include "lib/netproxy/server.h"
#include "lib/provider/json.h"
#include "lib/rules/domain_rules.h"
#include "tests/mcp/plain_server.h"

namespace garuda {
namespace mcp {
namespace {

using ::testing::HasSubstr;

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

Value Parse(absl::string_view json) {
  absl::StatusOr<Value> value = provider::ParseJson(json, "test JSON");
  EXPECT_TRUE(value.ok()) << value.status();
  return value.ok() ? *value : Value();
}

struct Started {
  PlainServer process;
  std::unique_ptr<Client> client;
};

Started Start(const std::string& package, const std::vector<std::string>& args,
              const std::string& root) {
  Started started;
  if (::access(PinnedServerScript(package).c_str(), R_OK) != 0) {
    ADD_FAILURE() << PinnedServerScript(package)
                  << " is missing; run: bash tools/setup.sh";
    return started;
  }
  absl::StatusOr<PlainServer> process =
      PlainServer::Start(NodeArgv(PinnedServerScript(package), args),
                         absl::StrCat(TempDir(), "/", package, ".stderr"));
  EXPECT_TRUE(process.ok()) << process.status();
  if (!process.ok()) return started;
  started.process = std::move(*process);
  ConnectOptions options;
  options.root_dir = root;
  options.client_version = "test";
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(
      package,
      StdioTransport(std::move(started.process.to_server),
                     std::move(started.process.from_server), package),
      options);
  EXPECT_TRUE(client.ok()) << client.status();
  if (client.ok()) started.client = std::move(*client);
  return started;
}

const Tool* Find(const ToolList& list, absl::string_view name) {
  for (const Tool& tool : list.tools) {
    if (tool.name == name) return &tool;
  }
  return nullptr;
}

TEST(ServerEverythingTest, EveryFeature) {
  Started everything = Start("server-everything", {"stdio"}, "/work/project");
  ASSERT_NE(everything.client, nullptr);
  Client& client = *everything.client;
  const ServerInfo& info = client.server_info();
  // Published servers still speak an earlier revision: negotiated down.
  EXPECT_THAT(info.protocol_version,
              testing::AnyOf("2025-11-25", "2025-06-18"));
  EXPECT_TRUE(info.has_tools);
  EXPECT_TRUE(info.has_resources);
  EXPECT_TRUE(info.has_prompts);

  absl::StatusOr<ToolList> tools = client.ListTools();
  ASSERT_TRUE(tools.ok()) << tools.status();
  EXPECT_TRUE(tools->problems.empty()) << tools->problems[0];
  for (const char* name :
       {"echo", "get-sum", "get-structured-content",
        "trigger-long-running-operation", "get-tiny-image"}) {
    EXPECT_NE(Find(*tools, name), nullptr) << name;
  }
  const Tool* structured = Find(*tools, "get-structured-content");
  ASSERT_NE(structured, nullptr);
  EXPECT_TRUE(structured->output_schema.has_value());
  EXPECT_TRUE(structured->read_only_hint);

  absl::StatusOr<CallResult> echo =
      client.CallTool("echo", Parse(R"({"message":"hello mcp"})"), {});
  ASSERT_TRUE(echo.ok()) << echo.status();
  EXPECT_FALSE(echo->is_error);
  EXPECT_THAT(echo->text, HasSubstr("hello mcp"));

  absl::StatusOr<CallResult> sum =
      client.CallTool("get-sum", Parse(R"({"a":2,"b":40})"), {});
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_THAT(sum->text, HasSubstr("42"));

  absl::StatusOr<CallResult> weather = client.CallTool(
      "get-structured-content", Parse(R"({"location":"Chicago"})"), {});
  ASSERT_TRUE(weather.ok()) << weather.status();
  ASSERT_TRUE(weather->structured_content.has_value());
  EXPECT_NE(provider::Member(*weather->structured_content, "temperature"),
            nullptr);

  absl::StatusOr<CallResult> image =
      client.CallTool("get-tiny-image", acp::Object(), {});
  ASSERT_TRUE(image.ok()) << image.status();
  EXPECT_THAT(image->text, HasSubstr("[image: image/png"));

  // Arguments the tool's schema refuses: the tool's error, not ours.
  absl::StatusOr<CallResult> wrong =
      client.CallTool("get-sum", Parse(R"({"a":"two"})"), {});
  EXPECT_TRUE(!wrong.ok() || wrong->is_error);

  // Progress from the long-running tool, every step.
  CallOptions progress_options;
  int steps = 0;
  std::optional<double> total;
  progress_options.on_progress = [&](const Progress& progress) {
    ++steps;
    total = progress.total;
  };
  absl::StatusOr<CallResult> long_run =
      client.CallTool("trigger-long-running-operation",
                      Parse(R"({"duration":0.3,"steps":3})"), progress_options);
  ASSERT_TRUE(long_run.ok()) << long_run.status();
  EXPECT_EQ(steps, 3);
  EXPECT_EQ(total, 3);

  // Cancelled while it runs: CANCELLED at once, and the server goes on.
  CancelFlag cancel;
  CallOptions cancel_options;
  cancel_options.cancel = &cancel;
  cancel_options.on_progress = [&](const Progress&) { cancel.Cancel(); };
  const absl::Time before = absl::Now();
  absl::StatusOr<CallResult> cancelled =
      client.CallTool("trigger-long-running-operation",
                      Parse(R"({"duration":20,"steps":40})"), cancel_options);
  ASSERT_FALSE(cancelled.ok());
  EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled);
  EXPECT_LT(absl::Now() - before, absl::Seconds(10));

  // A time limit shorter than the call.
  CallOptions short_options;
  short_options.timeout = absl::Milliseconds(300);
  absl::StatusOr<CallResult> timed_out =
      client.CallTool("trigger-long-running-operation",
                      Parse(R"({"duration":5,"steps":5})"), short_options);
  ASSERT_FALSE(timed_out.ok());
  EXPECT_EQ(timed_out.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(timed_out.status().message(),
              HasSubstr("mcp server 'server-everything': did not answer"));

  EXPECT_TRUE(client.Ping().ok());

  // The server asks for our roots (roots/list) and shows them.
  absl::StatusOr<ToolList> again = client.ListTools();
  ASSERT_TRUE(again.ok()) << again.status();
  if (Find(*again, "get-roots-list") != nullptr) {
    absl::StatusOr<CallResult> roots =
        client.CallTool("get-roots-list", acp::Object(), {});
    ASSERT_TRUE(roots.ok()) << roots.status();
    EXPECT_THAT(roots->text, HasSubstr("file:///work/project"));
  }

  absl::StatusOr<std::vector<Resource>> resources = client.ListResources();
  ASSERT_TRUE(resources.ok()) << resources.status();
  ASSERT_FALSE(resources->empty());
  absl::StatusOr<ResourceContents> read =
      client.ReadResource((*resources)[0].uri);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_FALSE(read->text.empty());

  absl::StatusOr<std::vector<Prompt>> prompts = client.ListPrompts();
  ASSERT_TRUE(prompts.ok()) << prompts.status();
  const Prompt* simple = nullptr;
  for (const Prompt& prompt : *prompts) {
    if (prompt.arguments.empty()) simple = &prompt;
  }
  ASSERT_NE(simple, nullptr);
  absl::StatusOr<PromptResult> got = client.GetPrompt(simple->name, {});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_FALSE(got->messages.empty());
  EXPECT_FALSE(got->messages[0].text.empty());
}

TEST(ServerEverythingTest, ConditionalToolsAnnouncedByListChanged) {
  // The server registers the tools that depend on our capabilities (roots)
  // after initialize, and says so with notifications/tools/list_changed.
  Started everything = Start("server-everything", {"stdio"}, "/work/project");
  ASSERT_NE(everything.client, nullptr);
  ASSERT_TRUE(everything.client->ListTools().ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  absl::StatusOr<ToolList> tools;
  while (absl::Now() < deadline) {
    ASSERT_TRUE(everything.client->Ping().ok());
    if (everything.client->ToolsChanged()) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  tools = everything.client->ListTools();
  ASSERT_TRUE(tools.ok()) << tools.status();
  ASSERT_NE(Find(*tools, "get-roots-list"), nullptr);
  absl::StatusOr<CallResult> roots =
      everything.client->CallTool("get-roots-list", acp::Object(), {});
  ASSERT_TRUE(roots.ok()) << roots.status();
  EXPECT_THAT(roots->text, HasSubstr("file:///work/project"));
}

TEST(ServerFilesystemTest, ReadsAndWritesInsideItsRootOnly) {
  const std::string root = absl::StrCat(TempDir(), "/fs-root");
  ASSERT_TRUE(MakeDirectories(root, 0700).ok());
  ASSERT_TRUE(WriteFileAtomically(absl::StrCat(root, "/hello.txt"),
                                  "hello from the project\n", 0600)
                  .ok());
  Started files = Start("server-filesystem", {root}, root);
  ASSERT_NE(files.client, nullptr);
  Client& client = *files.client;
  absl::StatusOr<ToolList> tools = client.ListTools();
  ASSERT_TRUE(tools.ok()) << tools.status();
  EXPECT_TRUE(tools->problems.empty()) << tools->problems[0];
  ASSERT_NE(Find(*tools, "read_text_file"), nullptr);
  EXPECT_TRUE(Find(*tools, "read_text_file")->read_only_hint);
  ASSERT_NE(Find(*tools, "write_file"), nullptr);

  Value read_args = acp::Object();
  acp::Set(read_args, "path", acp::Str(absl::StrCat(root, "/hello.txt")));
  absl::StatusOr<CallResult> read =
      client.CallTool("read_text_file", read_args, {});
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_FALSE(read->is_error) << read->text;
  EXPECT_THAT(read->text, HasSubstr("hello from the project"));

  Value write_args = acp::Object();
  acp::Set(write_args, "path", acp::Str(absl::StrCat(root, "/new.txt")));
  acp::Set(write_args, "content", acp::Str("written by the server"));
  absl::StatusOr<CallResult> written =
      client.CallTool("write_file", write_args, {});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_FALSE(written->is_error) << written->text;
  absl::StatusOr<std::string> content =
      ReadFileToString(absl::StrCat(root, "/new.txt"));
  ASSERT_TRUE(content.ok()) << content.status();
  EXPECT_EQ(*content, "written by the server");

  // Outside its root: the server's own refusal, an isError result.
  Value outside = acp::Object();
  acp::Set(outside, "path", acp::Str("/etc/hostname"));
  absl::StatusOr<CallResult> refused =
      client.CallTool("read_text_file", outside, {});
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_TRUE(refused->is_error);
}

// A free loopback port (bound, read, closed: the server binds it next).
uint16_t FreePort() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  EXPECT_EQ(
      ::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)),
      0);
  EXPECT_EQ(
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length),
      0);
  return ntohs(address.sin_port);
}

// Waits (bounded) until something accepts on 127.0.0.1:port.
bool Accepting(uint16_t port, absl::Duration within) {
  const absl::Time deadline = absl::Now() + within;
  while (absl::Now() < deadline) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&address),
                  sizeof(address)) == 0) {
      return true;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  return false;
}

TEST(ServerEverythingTest, StreamableHttpThroughTheProxy) {
  const uint16_t port = FreePort();
  absl::StatusOr<PlainServer> process = PlainServer::Start(
      NodeArgv(PinnedServerScript("server-everything"), {"streamableHttp"}),
      absl::StrCat(TempDir(), "/everything-http.stderr"),
      {absl::StrCat("PORT=", port)});
  ASSERT_TRUE(process.ok()) << process.status();
  ASSERT_TRUE(Accepting(port, absl::Seconds(30)));

  // lib/netproxy's proxy, letting through this one host and port.
  uint16_t proxy_port = 0;
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  {
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address),
                     sizeof(address)),
              0);
    ASSERT_EQ(::listen(listener.get(), 16), 0);
    ASSERT_EQ(::getsockname(listener.get(),
                            reinterpret_cast<sockaddr*>(&address), &length),
              0);
    proxy_port = ntohs(address.sin_port);
  }
  netproxy::ProxyOptions proxy_options;
  proxy_options.rules = *netproxy::DomainRules::Create({"everything.test"}, {});
  proxy_options.allowed_ports = {port};
  proxy_options.test_name_map = {{"everything.test", "127.0.0.1"}};
  netproxy::ProxyServer proxy(std::move(proxy_options));
  std::thread serving([&] { (void)proxy.Serve(listener.get()); });
  // Stopped and joined however the test ends.
  struct Stopper {
    netproxy::ProxyServer* proxy;
    std::thread* thread;
    ~Stopper() {
      proxy->Stop();
      thread->join();
    }
  } stopper{&proxy, &serving};

  {
    HttpOptions http;
    http.url = absl::StrCat("http://everything.test:", port, "/mcp");
    http.proxy_host_port = absl::StrCat("127.0.0.1:", proxy_port);
    absl::StatusOr<std::unique_ptr<Transport>> transport =
        HttpTransport(http, "everything-http");
    ASSERT_TRUE(transport.ok()) << transport.status();
    ConnectOptions options;
    options.root_dir = "/work/project";
    absl::StatusOr<std::unique_ptr<Client>> client =
        Client::Connect("everything-http", *std::move(transport), options);
    ASSERT_TRUE(client.ok()) << client.status();
    EXPECT_THAT((*client)->server_info().protocol_version,
                testing::AnyOf("2025-11-25", "2025-06-18"));
    absl::StatusOr<ToolList> tools = (*client)->ListTools();
    ASSERT_TRUE(tools.ok()) << tools.status();
    ASSERT_NE(Find(*tools, "echo"), nullptr);
    absl::StatusOr<CallResult> echo =
        (*client)->CallTool("echo", Parse(R"({"message":"over http"})"), {});
    ASSERT_TRUE(echo.ok()) << echo.status();
    EXPECT_THAT(echo->text, HasSubstr("over http"));
    // Progress arrives on the call's event stream.
    CallOptions progress_options;
    int steps = 0;
    progress_options.on_progress = [&](const Progress&) { ++steps; };
    absl::StatusOr<CallResult> long_run = (*client)->CallTool(
        "trigger-long-running-operation",
        Parse(R"({"duration":0.3,"steps":3})"), progress_options);
    ASSERT_TRUE(long_run.ok()) << long_run.status();
    EXPECT_EQ(steps, 3);
    // Cancelled while it streams: the stream is closed, the session goes on.
    CancelFlag cancel;
    CallOptions cancel_options;
    cancel_options.cancel = &cancel;
    cancel_options.on_progress = [&](const Progress&) { cancel.Cancel(); };
    absl::StatusOr<CallResult> cancelled = (*client)->CallTool(
        "trigger-long-running-operation",
        Parse(R"({"duration":20,"steps":40})"), cancel_options);
    ASSERT_FALSE(cancelled.ok());
    EXPECT_EQ(cancelled.status().code(), absl::StatusCode::kCancelled);
    EXPECT_TRUE((*client)->Ping().ok());
    (*client)->Close();
  }
}

TEST(PlainServerTest, ACrashedServerIsNamed) {
  // node exits at once: the probe finds its output closed.
  absl::StatusOr<PlainServer> process =
      PlainServer::Start({"node", "-e", "process.exit(3)"},
                         absl::StrCat(TempDir(), "/crash.stderr"));
  ASSERT_TRUE(process.ok()) << process.status();
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(
      "crasher",
      StdioTransport(std::move(process->to_server),
                     std::move(process->from_server), "crasher"),
      ConnectOptions());
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(client.status().message(), HasSubstr("mcp server 'crasher'"));
}

}  // namespace
}  // namespace mcp
}  // namespace garuda
