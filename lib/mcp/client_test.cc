// The client against a scripted server over a socketpair, in one process:
// each protocol feature, and each way a server can misbehave.
#include "lib/mcp/client.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/acp/json_rpc.h"
#include "lib/base/files.h"
#include "lib/provider/json.h"

namespace garuda {
namespace mcp {
namespace {

using acp::Object;
using acp::Set;
using acp::Str;
using ::testing::HasSubstr;
using ::testing::Not;

Value Parse(absl::string_view json) {
  absl::StatusOr<Value> value = provider::ParseJson(json, "test JSON");
  EXPECT_TRUE(value.ok()) << value.status() << " in " << json;
  return value.ok() ? *value : Value();
}

std::string Method(const Value& message) {
  return provider::StringMember(message, "method");
}

// A server in a thread: each message the client writes goes to `script`,
// which answers with Reply/Write. Everything received is kept.
class FakeServer {
 public:
  using Script = std::function<void(FakeServer&, const Value&)>;

  explicit FakeServer(Script script) : script_(std::move(script)) {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    client_end_.Reset(fds[0]);
    server_end_.Reset(fds[1]);
    thread_ = std::thread([this] { Serve(); });
  }
  ~FakeServer() {
    ::shutdown(server_end_.get(), SHUT_RDWR);
    thread_.join();
  }

  // The client's end, as its stdin and stdout.
  std::unique_ptr<mcp::Transport> ClientEnd(
      absl::Duration send_timeout = absl::Seconds(30)) {
    UniqueFd to(::dup(client_end_.get()));
    return StdioTransport(std::move(to), std::move(client_end_), "fake",
                          send_timeout);
  }

  void Write(absl::string_view raw) {
    std::string line = absl::StrCat(raw, "\n");
    ASSERT_TRUE(WriteAll(server_end_.get(), line).ok());
  }
  void Reply(const Value& request, const Value& result) {
    Value answer = Object();
    Set(answer, "jsonrpc", Str("2.0"));
    Set(answer, "id", *provider::Member(request, "id"));
    Set(answer, "result", result);
    Write(acp::JsonLine(answer));
  }
  void Error(const Value& request, int code, absl::string_view text,
             Value data = Value()) {
    Value error = Object();
    Set(error, "code", acp::Num(code));
    Set(error, "message", Str(text));
    if (data.kind_case() != Value::KIND_NOT_SET) Set(error, "data", data);
    Value answer = Object();
    Set(answer, "jsonrpc", Str("2.0"));
    Set(answer, "id", *provider::Member(request, "id"));
    Set(answer, "error", std::move(error));
    Write(acp::JsonLine(answer));
  }
  // Ends the server's output, as a crash does.
  void Crash() { ::shutdown(server_end_.get(), SHUT_WR); }

  std::vector<Value> Received() {
    std::lock_guard<std::mutex> lock(mu_);
    return received_;
  }
  std::vector<Value> ReceivedMethod(absl::string_view method) {
    std::vector<Value> found;
    for (const Value& message : Received()) {
      if (Method(message) == method) found.push_back(message);
    }
    return found;
  }
  // Waits (bounded) until a message of `method` has arrived.
  bool WaitFor(absl::string_view method) {
    std::unique_lock<std::mutex> lock(mu_);
    return arrived_.wait_for(lock, std::chrono::seconds(10), [&] {
      for (const Value& message : received_) {
        if (Method(message) == method) return true;
      }
      return false;
    });
  }

 private:
  void Serve() {
    acp::LineReader reader(server_end_.get(), 64 << 20);
    while (true) {
      absl::StatusOr<std::optional<acp::LineReader::Line>> line =
          reader.ReadLine();
      if (!line.ok() || !line->has_value()) return;
      // A line the client left half written (a send that timed out) is
      // not a message.
      absl::StatusOr<Value> parsed =
          provider::ParseJson((*line)->text, "a client message");
      if (!parsed.ok()) continue;
      Value message = *std::move(parsed);
      {
        std::lock_guard<std::mutex> lock(mu_);
        received_.push_back(message);
      }
      arrived_.notify_all();
      script_(*this, message);
    }
  }

  Script script_;
  UniqueFd client_end_;
  UniqueFd server_end_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable arrived_;
  std::vector<Value> received_;
};

// A server of the revisions with a handshake: server/discover is an unknown
// method; initialize answers `version`; the rest goes to `rest`.
FakeServer::Script Legacy(FakeServer::Script rest,
                          std::string version = "2025-11-25") {
  return [rest, version](FakeServer& server, const Value& message) {
    const std::string method = Method(message);
    if (method == "server/discover") {
      server.Error(message, -32601, "Method not found");
    } else if (method == "initialize") {
      server.Reply(
          message,
          Parse(absl::StrCat(
              R"({"protocolVersion":")", version,
              R"(","capabilities":{"tools":{"listChanged":true},)"
              R"("resources":{},"prompts":{}},)"
              R"("serverInfo":{"name":"fake\u001b[2J","version":"1.0"},)"
              R"("instructions":"use it"})")));
    } else if (method == "ping") {
      server.Reply(message, Object());
    } else if (rest) {
      rest(server, message);
    }
  };
}

// A 2026-07-28 server: server/discover answers; every request must carry
// the protocol version in _meta (else an error, as such a server does).
FakeServer::Script Modern(FakeServer::Script rest) {
  return [rest](FakeServer& server, const Value& message) {
    if (!provider::Member(message, "id")) {
      if (rest) rest(server, message);
      return;
    }
    const Value* params = provider::ObjectMember(message, "params");
    const Value* meta =
        params ? provider::ObjectMember(*params, "_meta") : nullptr;
    if (meta == nullptr ||
        provider::StringMember(
            *meta, "io.modelcontextprotocol/protocolVersion") != "2026-07-28") {
      server.Error(message, -32022, "Unsupported protocol version",
                   Parse(R"({"supported":["2026-07-28"]})"));
      return;
    }
    if (Method(message) == "server/discover") {
      server.Reply(message, Parse(R"({"resultType":"complete",
          "supportedVersions":["2026-07-28"],
          "capabilities":{"tools":{"listChanged":true}},
          "_meta":{"io.modelcontextprotocol/serverInfo":{"name":"modern","version":"2"}},
          "ttlMs":0,"cacheScope":"private"})"));
    } else if (Method(message) == "subscriptions/listen") {
      // Open for the connection's life: no answer.
    } else if (rest) {
      rest(server, message);
    }
  };
}

ConnectOptions Quick() {
  ConnectOptions options;
  options.root_dir = "/work/my project";
  options.client_version = "1.2";
  options.start_timeout = absl::Seconds(10);
  options.discover_timeout = absl::Seconds(5);
  return options;
}

absl::StatusOr<std::unique_ptr<Client>> ConnectTo(
    FakeServer& server, ConnectOptions options = Quick()) {
  return Client::Connect("fake", server.ClientEnd(), options);
}

TEST(ClientTest, LegacyHandshakeAfterTheDiscoverProbe) {
  FakeServer server(Legacy(nullptr));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ((*client)->server_info().protocol_version, "2025-11-25");
  EXPECT_TRUE((*client)->server_info().has_tools);
  EXPECT_TRUE((*client)->server_info().has_prompts);
  // The server's name reaches us without its escape sequence.
  EXPECT_THAT((*client)->server_info().name, Not(HasSubstr("\x1b")));
  EXPECT_THAT((*client)->server_info().name, HasSubstr("fake"));
  ASSERT_TRUE(server.WaitFor("notifications/initialized"));
  std::vector<Value> received = server.Received();
  ASSERT_GE(received.size(), 3u);
  EXPECT_EQ(Method(received[0]), "server/discover");
  EXPECT_EQ(Method(received[1]), "initialize");
  const Value& params = *provider::ObjectMember(received[1], "params");
  EXPECT_EQ(provider::StringMember(params, "protocolVersion"), "2025-11-25");
  EXPECT_EQ(provider::StringMember(
                *provider::ObjectMember(params, "clientInfo"), "name"),
            "garuda");
  EXPECT_TRUE(provider::ObjectMember(
      *provider::ObjectMember(params, "capabilities"), "roots"));
}

TEST(ClientTest, OlderRevisionAccepted) {
  FakeServer server(Legacy(nullptr, "2025-06-18"));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ((*client)->server_info().protocol_version, "2025-06-18");
}

TEST(ClientTest, UnknownRevisionRefusedByName) {
  FakeServer server(Legacy(nullptr, "2024-11-05"));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(client.status().message(), HasSubstr("mcp server 'fake'"));
  EXPECT_THAT(client.status().message(), HasSubstr("2024-11-05"));
}

TEST(ClientTest, ModernServerGetsMetaOnEveryRequest) {
  FakeServer server(Modern([](FakeServer& server, const Value& message) {
    if (Method(message) == "tools/list") {
      server.Reply(message, Parse(R"({"resultType":"complete","tools":[
          {"name":"t","inputSchema":{"type":"object"}}],"ttlMs":0,
          "cacheScope":"private"})"));
    }
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ((*client)->server_info().protocol_version, "2026-07-28");
  EXPECT_EQ((*client)->server_info().name, "modern");
  absl::StatusOr<ToolList> tools = (*client)->ListTools();
  ASSERT_TRUE(tools.ok()) << tools.status();
  ASSERT_EQ(tools->tools.size(), 1u);
  // No handshake in this revision; list_changed comes on a subscription.
  EXPECT_TRUE(server.ReceivedMethod("initialize").empty());
  ASSERT_EQ(server.ReceivedMethod("subscriptions/listen").size(), 1u);
  const Value listen = server.ReceivedMethod("subscriptions/listen")[0];
  const Value* filter = provider::ObjectMember(
      *provider::ObjectMember(listen, "params"), "notifications");
  ASSERT_NE(filter, nullptr);
  EXPECT_TRUE(provider::Member(*filter, "toolsListChanged")->bool_value());
  // The server's list_changed, on that subscription.
  server.Write(absl::StrCat(
      R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed",)",
      R"("params":{"_meta":{"io.modelcontextprotocol/subscriptionId":)",
      acp::JsonLine(*provider::Member(listen, "id")), "}}}"));
  ASSERT_TRUE((*client)->Ping().ok());
  EXPECT_TRUE((*client)->ToolsChanged());
}

TEST(ClientTest, SlowModernServerAnsweringTheProbeLate) {
  // The probe's answer comes only after initialize went out (a server still
  // loading when the probe's time ran out): the late DiscoverResult still
  // makes it a 2026-07-28 session, and initialize's error is not waited for.
  FakeServer::Script modern =
      Modern([](FakeServer& server, const Value& message) {
        if (Method(message) == "tools/list") {
          server.Reply(message, Parse(R"({"tools":[]})"));
        }
      });
  std::optional<Value> held;
  FakeServer server([&](FakeServer& server, const Value& message) {
    if (Method(message) == "server/discover" && !held.has_value()) {
      held = message;
    } else if (Method(message) == "initialize") {
      modern(server, *held);    // the DiscoverResult, late
      modern(server, message);  // an error: no _meta
    } else {
      modern(server, message);
    }
  });
  ConnectOptions options = Quick();
  options.discover_timeout = absl::Milliseconds(50);
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server, options);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ((*client)->server_info().protocol_version, "2026-07-28");
  EXPECT_EQ((*client)->server_info().name, "modern");
  EXPECT_TRUE((*client)->ListTools().ok());
  EXPECT_EQ(server.ReceivedMethod("initialize").size(), 1u);
  EXPECT_TRUE(server.ReceivedMethod("notifications/initialized").empty());
}

TEST(ClientTest, UnsupportedVersionErrorChoosesAnOlderOne) {
  // A dual-era server that prefers the older revision.
  FakeServer server([](FakeServer& server, const Value& message) {
    if (Method(message) == "server/discover") {
      server.Error(message, -32022, "Unsupported protocol version",
                   Parse(R"({"supported":["2025-06-18"],
                             "requested":"2026-07-28"})"));
    } else {
      Legacy(nullptr, "2025-06-18")(server, message);
    }
  });
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ((*client)->server_info().protocol_version, "2025-06-18");
  EXPECT_EQ(provider::StringMember(
                *provider::ObjectMember(server.ReceivedMethod("initialize")[0],
                                        "params"),
                "protocolVersion"),
            "2025-06-18");
}

TEST(ClientTest, NoCommonVersionNamed) {
  FakeServer server([](FakeServer& server, const Value& message) {
    server.Error(message, -32022, "Unsupported protocol version",
                 Parse(R"({"supported":["2030-01-01"]})"));
  });
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(client.status().message(), HasSubstr("2030-01-01"));
  EXPECT_THAT(client.status().message(), HasSubstr("2026-07-28"));
}

TEST(ClientTest, ToolsOverPagesAndListChanged) {
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    if (Method(message) != "tools/list") return;
    const Value& params = *provider::ObjectMember(message, "params");
    if (provider::StringMember(params, "cursor").empty()) {
      server.Reply(message, Parse(R"({"tools":[
          {"name":"a","description":"first","inputSchema":{"type":"object"},
           "annotations":{"readOnlyHint":true}}],"nextCursor":"p2"})"));
    } else {
      server.Reply(message, Parse(R"({"tools":[
          {"name":"b","inputSchema":{"type":"object","properties":{}},
           "outputSchema":{"type":"object"}}]})"));
    }
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<ToolList> tools = (*client)->ListTools();
  ASSERT_TRUE(tools.ok()) << tools.status();
  ASSERT_EQ(tools->tools.size(), 2u);
  EXPECT_EQ(tools->tools[0].name, "a");
  EXPECT_TRUE(tools->tools[0].read_only_hint);
  EXPECT_EQ(tools->tools[1].name, "b");
  EXPECT_TRUE(tools->tools[1].output_schema.has_value());
  EXPECT_TRUE(tools->problems.empty());
  EXPECT_FALSE((*client)->ToolsChanged());
  server.Write(
      R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  // Read during the next request (or Poll).
  ASSERT_TRUE((*client)->Ping().ok());
  EXPECT_TRUE((*client)->ToolsChanged());
  ASSERT_TRUE((*client)->ListTools().ok());
  EXPECT_FALSE((*client)->ToolsChanged());
}

TEST(ClientTest, LoopingCursorEnds) {
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    if (Method(message) == "tools/list") {
      server.Reply(message, Parse(R"({"tools":[],"nextCursor":"same"})"));
    }
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<ToolList> tools = (*client)->ListTools();
  ASSERT_FALSE(tools.ok());
  EXPECT_THAT(tools.status().message(), HasSubstr("cursor twice"));
}

TEST(ClientTest, TenThousandToolsCappedWithAMessage) {
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    if (Method(message) != "tools/list") return;
    std::string tools;
    for (int i = 0; i < 10000; ++i) {
      absl::StrAppend(&tools, i ? "," : "", R"({"name":"tool)", i,
                      R"(","inputSchema":{"type":"object"}})");
    }
    server.Write(absl::StrCat(R"({"jsonrpc":"2.0","id":)",
                              acp::JsonLine(*provider::Member(message, "id")),
                              R"(,"result":{"tools":[)", tools, "]}}"));
  }));
  ConnectOptions options = Quick();
  options.max_tools = 100;
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server, options);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<ToolList> tools = (*client)->ListTools();
  ASSERT_TRUE(tools.ok()) << tools.status();
  EXPECT_EQ(tools->tools.size(), 100u);
  ASSERT_EQ(tools->problems.size(), 1u);
  EXPECT_THAT(tools->problems[0], HasSubstr("mcp server 'fake'"));
  EXPECT_THAT(tools->problems[0], HasSubstr("listed 10000 tools"));
}

TEST(ClientTest, InvalidSchemasDroppedPerTool) {
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    if (Method(message) != "tools/list") return;
    server.Reply(message, Parse(R"({"tools":[
        {"name":"good","inputSchema":{"type":"object"}},
        {"name":"list_schema","inputSchema":[1,2]},
        {"name":"string_type","inputSchema":{"type":"string"}},
        {"name":"no_schema"},
        {"name":"bad props","inputSchema":{"type":"object"}},
        {"name":"bad_required","inputSchema":{"type":"object","required":[1]}},
        {"name":"bad_output","inputSchema":{"type":"object"},"outputSchema":7},
        {"name":"","inputSchema":{"type":"object"}},
        {"name":"good","inputSchema":{"type":"object"}},
        "not a tool"]})"));
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<ToolList> tools = (*client)->ListTools();
  ASSERT_TRUE(tools.ok()) << tools.status();
  ASSERT_EQ(tools->tools.size(), 1u);
  EXPECT_EQ(tools->tools[0].name, "good");
  ASSERT_EQ(tools->problems.size(), 9u);
  for (const std::string& problem : tools->problems) {
    EXPECT_THAT(problem, HasSubstr("mcp server 'fake'"));
  }
  EXPECT_THAT(tools->problems[0], HasSubstr("list_schema"));
  EXPECT_THAT(tools->problems[1], HasSubstr("string_type"));
  EXPECT_THAT(tools->problems[2], HasSubstr("no_schema"));
  EXPECT_THAT(tools->problems[7], HasSubstr("listed twice"));
}

TEST(ClientTest, MisplacedHeaderAnnotationsDropTheTool) {
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    if (Method(message) != "tools/list") return;
    server.Reply(message, Parse(R"({"tools":[
        {"name":"ok","inputSchema":{"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"}}}},
        {"name":"in_items","inputSchema":{"type":"object","properties":{
            "list":{"type":"array","items":{"type":"string","x-mcp-header":"L"}}}}},
        {"name":"on_number","inputSchema":{"type":"object","properties":{
            "n":{"type":"number","x-mcp-header":"N"}}}},
        {"name":"twice","inputSchema":{"type":"object","properties":{
            "a":{"type":"string","x-mcp-header":"X"},
            "b":{"type":"string","x-mcp-header":"x"}}}},
        {"name":"colon","inputSchema":{"type":"object","properties":{
            "a":{"type":"string","x-mcp-header":"A:B"}}}}]})"));
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<ToolList> tools = (*client)->ListTools();
  ASSERT_TRUE(tools.ok()) << tools.status();
  ASSERT_EQ(tools->tools.size(), 1u);
  EXPECT_EQ(tools->tools[0].name, "ok");
  ASSERT_EQ(tools->problems.size(), 4u);
  EXPECT_THAT(tools->problems[0], HasSubstr("in_items"));
  EXPECT_THAT(tools->problems[1],
              HasSubstr("not a string, integer or boolean"));
  EXPECT_THAT(tools->problems[2], HasSubstr("used twice"));
  EXPECT_THAT(tools->problems[3], HasSubstr("not an HTTP header name"));
}

TEST(ClientTest, CallWithStructuredContentAndError) {
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    if (Method(message) != "tools/call") return;
    const Value& params = *provider::ObjectMember(message, "params");
    if (provider::StringMember(params, "name") == "add") {
      server.Reply(message, Parse(R"({"content":[
          {"type":"text","text":"3"},
          {"type":"image","mimeType":"image/png","data":"AAAA"},
          {"type":"resource_link","uri":"file:///x","name":"x"},
          {"type":"resource","resource":{"uri":"mem://a","text":"inside"}}],
          "structuredContent":{"sum":3}})"));
    } else {
      server.Reply(message, Parse(R"({"content":[{"type":"text",
          "text":"no such file\u001b]0;title\u0007 \u009b"}],"isError":true})"));
    }
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<CallResult> added =
      (*client)->CallTool("add", Parse(R"({"a":1,"b":2})"), CallOptions());
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_FALSE(added->is_error);
  EXPECT_EQ(added->text,
            "3\n[image: image/png, 3 bytes]\n[resource link: file:///x (x)]\n"
            "[resource: mem://a]\ninside");
  ASSERT_TRUE(added->structured_content.has_value());
  EXPECT_EQ(provider::Member(*added->structured_content, "sum")->number_value(),
            3);
  const Value call = server.ReceivedMethod("tools/call")[0];
  const Value& arguments =
      *provider::Member(*provider::ObjectMember(call, "params"), "arguments");
  EXPECT_EQ(provider::Member(arguments, "a")->number_value(), 1);
  EXPECT_EQ(provider::Member(arguments, "b")->number_value(), 2);

  absl::StatusOr<CallResult> failed =
      (*client)->CallTool("read", Object(), CallOptions());
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_TRUE(failed->is_error);
  EXPECT_THAT(failed->text, HasSubstr("no such file"));
  // OSC and CSI (C1) sequences shown as marks, never passed on.
  EXPECT_THAT(failed->text, Not(HasSubstr("\x1b")));
  EXPECT_THAT(failed->text, Not(HasSubstr("\x07")));
  EXPECT_THAT(failed->text, Not(HasSubstr("\xc2\x9b")));
}

TEST(ClientTest, InvalidResultNamed) {
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    if (Method(message) == "tools/call") {
      server.Reply(message, Parse(R"({"content":"not a list"})"));
    }
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<CallResult> result =
      (*client)->CallTool("x", Object(), CallOptions());
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(),
              HasSubstr("mcp server 'fake': answered tools/call \"x\" with "
                        "content that is a string"));
}

TEST(ClientTest, LargeResultCapped) {
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    if (Method(message) == "tools/call") {
      Value result = Object();
      Value block = Object();
      Set(block, "type", Str("text"));
      Set(block, "text", Str(std::string(1 << 20, 'x')));
      Value content = acp::List();
      acp::Append(content, std::move(block));
      Set(result, "content", std::move(content));
      Value structured = Object();
      Set(structured, "big", Str(std::string(1 << 20, 'y')));
      Set(result, "structuredContent", std::move(structured));
      server.Reply(message, result);
    }
  }));
  ConnectOptions options = Quick();
  options.max_result_bytes = 4096;
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server, options);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<CallResult> result =
      (*client)->CallTool("x", Object(), CallOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->truncated);
  EXPECT_LT(result->text.size(), 4200u);
  EXPECT_FALSE(result->structured_content.has_value());
}

TEST(ClientTest, MessageOverTheLimitThrownAwayChannelGoesOn) {
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    if (Method(message) == "tools/call") {
      server.Write(
          absl::StrCat(R"({"jsonrpc":"2.0","id":)",
                       acp::JsonLine(*provider::Member(message, "id")),
                       R"(,"result":{"content":[{"type":"text","text":")",
                       std::string(kMaxMessageBytes, 'z'), R"("}]}})"));
    } else if (Method(message) == "ping") {
      server.Reply(message, Object());
    }
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<CallResult> result =
      (*client)->CallTool("x", Object(), CallOptions());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(result.status().message(), HasSubstr("over the limit"));
  EXPECT_TRUE((*client)->Ping().ok());
}

TEST(ClientTest, ProgressThenCancel) {
  CancelFlag cancel;
  std::atomic<int> progressed{0};
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    if (Method(message) != "tools/call") return;
    const Value& meta = *provider::ObjectMember(
        *provider::ObjectMember(message, "params"), "_meta");
    const std::string token =
        acp::JsonLine(*provider::Member(meta, "progressToken"));
    for (int i = 1; i <= 2; ++i) {
      server.Write(absl::StrCat(
          R"({"jsonrpc":"2.0","method":"notifications/progress","params":)",
          R"({"progressToken":)", token, R"(,"progress":)", i,
          R"(,"total":10,"message":"step\u001b[31m"}})"));
    }
    // Then nothing: the call runs until it is cancelled.
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  CallOptions options;
  options.cancel = &cancel;
  std::string last_message;
  options.on_progress = [&](const Progress& progress) {
    last_message = progress.message;
    EXPECT_EQ(progress.total, 10);
    if (++progressed == 2) cancel.Cancel();
  };
  absl::StatusOr<CallResult> result =
      (*client)->CallTool("slow", Object(), options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(progressed.load(), 2);
  EXPECT_THAT(last_message, Not(HasSubstr("\x1b")));
  ASSERT_TRUE(server.WaitFor("notifications/cancelled"));
  const Value cancelled = server.ReceivedMethod("notifications/cancelled")[0];
  EXPECT_EQ(acp::JsonLine(*provider::Member(
                *provider::ObjectMember(cancelled, "params"), "requestId")),
            acp::JsonLine(*provider::Member(
                server.ReceivedMethod("tools/call")[0], "id")));
}

TEST(ClientTest, CallTimeoutCancelsAndLateAnswerIsIgnored) {
  std::mutex mu;
  Value held;
  FakeServer server(Legacy([&](FakeServer& server, const Value& message) {
    if (Method(message) == "tools/call") {
      std::lock_guard<std::mutex> lock(mu);
      held = message;  // answered only after the next ping
    } else if (Method(message) == "ping") {
      std::lock_guard<std::mutex> lock(mu);
      server.Reply(held,
                   Parse(R"({"content":[{"type":"text","text":"late"}]})"));
      server.Reply(message, Object());
    }
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  CallOptions options;
  options.timeout = absl::Milliseconds(200);
  absl::StatusOr<CallResult> result =
      (*client)->CallTool("slow", Object(), options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(result.status().message(),
              HasSubstr("mcp server 'fake': did not answer tools/call"));
  ASSERT_TRUE(server.WaitFor("notifications/cancelled"));
  EXPECT_TRUE((*client)->Ping().ok());
  EXPECT_TRUE((*client)->broken().ok());
}

TEST(ClientTest, ServerRequestsAnsweredDuringACall) {
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    if (Method(message) == "tools/call") {
      server.Write(R"({"jsonrpc":"2.0","id":"s1","method":"ping"})");
      server.Write(R"({"jsonrpc":"2.0","id":"s2","method":"roots/list"})");
      server.Write(
          R"({"jsonrpc":"2.0","id":"s3","method":"sampling/createMessage","params":{}})");
    } else if (!provider::Member(message, "method") &&
               provider::StringMember(message, "id") == "s3") {
      server.Write(
          absl::StrCat(R"({"jsonrpc":"2.0","id":)",
                       acp::JsonLine(*provider::Member(
                           server.ReceivedMethod("tools/call")[0], "id")),
                       R"(,"result":{"content":[]}})"));
    }
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<CallResult> result =
      (*client)->CallTool("x", Object(), CallOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<Value> answers;
  for (const Value& message : server.Received()) {
    if (!provider::Member(message, "method")) answers.push_back(message);
  }
  ASSERT_EQ(answers.size(), 3u);
  EXPECT_EQ(acp::JsonLine(*provider::Member(answers[0], "result")), "{}");
  const Value& roots = *provider::Member(answers[1], "result");
  ASSERT_NE(provider::ListMember(roots, "roots"), nullptr);
  ASSERT_EQ(provider::ListMember(roots, "roots")->values_size(), 1);
  const Value& root = provider::ListMember(roots, "roots")->values(0);
  EXPECT_EQ(provider::StringMember(root, "uri"), "file:///work/my%20project");
  EXPECT_EQ(provider::StringMember(root, "name"), "my project");
  EXPECT_EQ(
      provider::Member(*provider::ObjectMember(answers[2], "error"), "code")
          ->number_value(),
      -32601);
}

TEST(ClientTest, ModernInputRequiredAnsweredWithRoots) {
  FakeServer server(Modern([](FakeServer& server, const Value& message) {
    if (Method(message) != "tools/call") return;
    const Value& params = *provider::ObjectMember(message, "params");
    const Value* responses = provider::ObjectMember(params, "inputResponses");
    if (responses == nullptr) {
      server.Reply(message, Parse(R"({"resultType":"input_required",
          "inputRequests":{"where":{"method":"roots/list","params":{}}},
          "requestState":"opaque-1"})"));
      return;
    }
    const Value& roots = *provider::Member(*responses, "where");
    const Value& root = provider::ListMember(roots, "roots")->values(0);
    server.Reply(
        message,
        Parse(absl::StrCat(
            R"({"resultType":"complete","content":[{"type":"text","text":)",
            acp::JsonLine(Str(provider::StringMember(root, "uri") + " " +
                              provider::StringMember(params, "requestState"))),
            "}]}")));
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<CallResult> result =
      (*client)->CallTool("where", Object(), CallOptions());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->text, "file:///work/my%20project opaque-1");
  // The first try went without answers; the retry with them.
  EXPECT_EQ(server.ReceivedMethod("tools/call").size(), 2u);
}

TEST(ClientTest, ModernSamplingRequestRefusedByName) {
  FakeServer server(Modern([](FakeServer& server, const Value& message) {
    if (Method(message) == "tools/call") {
      server.Reply(message, Parse(R"({"resultType":"input_required",
          "inputRequests":{"llm":{"method":"sampling/createMessage","params":{}}}})"));
    }
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<CallResult> result =
      (*client)->CallTool("x", Object(), CallOptions());
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(),
              HasSubstr("sampling/createMessage, which garuda does not offer"));
}

TEST(ClientTest, CrashNamedAndSticky) {
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    if (Method(message) == "tools/call") server.Crash();
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<CallResult> result =
      (*client)->CallTool("x", Object(), CallOptions());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(result.status().message(),
              HasSubstr("mcp server 'fake': closed its stdout"));
  EXPECT_FALSE((*client)->broken().ok());
  EXPECT_EQ((*client)->Ping().code(), absl::StatusCode::kUnavailable);
}

TEST(ClientTest, CrashAtStart) {
  FakeServer server([](FakeServer& server, const Value&) { server.Crash(); });
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(client.status().message(), HasSubstr("mcp server 'fake'"));
}

TEST(ClientTest, HangAtStartTimesOut) {
  FakeServer server([](FakeServer&, const Value&) {});
  ConnectOptions options = Quick();
  options.discover_timeout = absl::Milliseconds(100);
  options.start_timeout = absl::Milliseconds(400);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server, options);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(client.status().message(),
              HasSubstr("mcp server 'fake': did not answer initialize"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  // The probe timed out, so the server was taken for an older revision.
  EXPECT_EQ(server.ReceivedMethod("initialize").size(), 1u);
}

TEST(ClientTest, GarbageOnStdoutNamedAndVisible) {
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    if (Method(message) == "tools/list") {
      server.Write("Server started \x1b[2J on port 3000");
    }
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<ToolList> tools = (*client)->ListTools();
  ASSERT_FALSE(tools.ok());
  EXPECT_EQ(tools.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(tools.status().message(),
              HasSubstr("mcp server 'fake': wrote what is not a JSON-RPC "
                        "message to its stdout"));
  EXPECT_THAT(tools.status().message(), HasSubstr("Server started"));
  EXPECT_THAT(tools.status().message(), Not(HasSubstr("\x1b")));
  EXPECT_FALSE((*client)->broken().ok());
}

TEST(ClientTest, ServerThatStopsReadingItsStdin) {
  std::atomic<bool> done{false};
  FakeServer server(Legacy([&](FakeServer&, const Value& message) {
    // From its first tools/list on, the server reads nothing more.
    if (Method(message) == "tools/list") {
      while (!done) absl::SleepFor(absl::Milliseconds(10));
    }
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Connect(
      "fake", server.ClientEnd(absl::Milliseconds(300)), Quick());
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ((*client)->ListTools(absl::Milliseconds(100)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  // Arguments larger than the socket's buffer: the write cannot finish.
  Value arguments = Object();
  Set(arguments, "data", Str(std::string(8 << 20, 'd')));
  absl::StatusOr<CallResult> result =
      (*client)->CallTool("x", arguments, CallOptions());
  done = true;
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(result.status().message(),
              HasSubstr("mcp server 'fake': did not read its stdin"));
  // Part of a line went out: nothing more can be sent on this channel.
  EXPECT_FALSE((*client)->broken().ok());
}

TEST(ClientTest, JsonThatIsNotJsonRpcNamed) {
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    if (Method(message) == "prompts/list") {
      server.Write(R"({"hello":"world"})");
    }
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::Status pinged = (*client)->ListPrompts().status();
  ASSERT_FALSE(pinged.ok());
  EXPECT_THAT(pinged.message(), HasSubstr("not JSON-RPC 2.0"));
}

TEST(ClientTest, ErrorAnswerNamed) {
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    if (Method(message) == "tools/call") {
      server.Error(message, -32602, "Unknown tool: x\x1b[0m");
    }
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<CallResult> result =
      (*client)->CallTool("x", Object(), CallOptions());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(),
              HasSubstr("answered tools/call with error -32602: Unknown tool"));
  EXPECT_THAT(result.status().message(), Not(HasSubstr("\x1b")));
}

TEST(ClientTest, ResourcesAndPrompts) {
  FakeServer server(Legacy([](FakeServer& server, const Value& message) {
    const std::string method = Method(message);
    if (method == "resources/list") {
      server.Reply(message, Parse(R"({"resources":[
          {"uri":"mem://1","name":"one","mimeType":"text/plain"},
          {"uri":"mem://2","name":"two","mimeType":"application/octet-stream"}]})"));
    } else if (method == "resources/read") {
      const std::string uri = provider::StringMember(
          *provider::ObjectMember(message, "params"), "uri");
      if (uri == "mem://1") {
        server.Reply(message, Parse(R"({"contents":[{"uri":"mem://1",
            "mimeType":"text/plain","text":"hello\u001b[1m"}]})"));
      } else {
        server.Reply(message, Parse(R"({"contents":[{"uri":"mem://2",
            "mimeType":"application/octet-stream","blob":"AAECAw=="}]})"));
      }
    } else if (method == "prompts/list") {
      server.Reply(message, Parse(R"({"prompts":[{"name":"greet",
          "arguments":[{"name":"who","required":true}]}]})"));
    } else if (method == "prompts/get") {
      const Value& args = *provider::ObjectMember(
          *provider::ObjectMember(message, "params"), "arguments");
      server.Reply(
          message,
          Parse(absl::StrCat(
              R"({"messages":[{"role":"user","content":{"type":"text","text":"hi )",
              provider::StringMember(args, "who"), R"("}}]})")));
    }
  }));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<std::vector<Resource>> resources = (*client)->ListResources();
  ASSERT_TRUE(resources.ok()) << resources.status();
  ASSERT_EQ(resources->size(), 2u);
  EXPECT_EQ((*resources)[1].name, "two");
  absl::StatusOr<ResourceContents> text = (*client)->ReadResource("mem://1");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(text->text, HasSubstr("hello"));
  EXPECT_THAT(text->text, Not(HasSubstr("\x1b")));
  absl::StatusOr<ResourceContents> blob = (*client)->ReadResource("mem://2");
  ASSERT_TRUE(blob.ok()) << blob.status();
  EXPECT_TRUE(blob->is_blob);
  EXPECT_EQ(blob->blob_bytes, 6u);  // the base64 length's three quarters
  absl::StatusOr<std::vector<Prompt>> prompts = (*client)->ListPrompts();
  ASSERT_TRUE(prompts.ok()) << prompts.status();
  ASSERT_EQ(prompts->size(), 1u);
  ASSERT_EQ((*prompts)[0].arguments.size(), 1u);
  EXPECT_TRUE((*prompts)[0].arguments[0].required);
  absl::StatusOr<PromptResult> prompt =
      (*client)->GetPrompt("greet", {{"who", "Ada"}});
  ASSERT_TRUE(prompt.ok()) << prompt.status();
  ASSERT_EQ(prompt->messages.size(), 1u);
  EXPECT_EQ(prompt->messages[0].role, "user");
  EXPECT_EQ(prompt->messages[0].text, "hi Ada");
}

TEST(ClientTest, CloseEndsTheServersInput) {
  FakeServer server(Legacy(nullptr));
  absl::StatusOr<std::unique_ptr<Client>> client = ConnectTo(server);
  ASSERT_TRUE(client.ok()) << client.status();
  (*client)->Close();
  EXPECT_FALSE((*client)->Ping().ok());
}

TEST(ModelToolNameTest, PlainNamesKept) {
  EXPECT_EQ(ModelToolName("files", "read_file"), "mcp__files__read_file");
}

TEST(ModelToolNameTest, ReplacedCharactersGetAStableSuffix) {
  const std::string dotted = ModelToolName("my.server", "get/thing");
  const std::string underscored = ModelToolName("my_server", "get_thing");
  EXPECT_THAT(dotted,
              testing::MatchesRegex("mcp__my_server__get_thing_[0-9a-f]{8}"));
  EXPECT_EQ(underscored, "mcp__my_server__get_thing");
  EXPECT_NE(dotted, underscored);
  EXPECT_EQ(dotted, ModelToolName("my.server", "get/thing"));
}

TEST(ModelToolNameTest, LongNamesCutToTheLimitAndStillDiffer) {
  const std::string a =
      ModelToolName("server", std::string(100, 'a') + "1", 64);
  const std::string b =
      ModelToolName("server", std::string(100, 'a') + "2", 64);
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(b.size(), 64u);
  EXPECT_NE(a, b);
  EXPECT_THAT(a, testing::MatchesRegex("mcp__server__a+_[0-9a-f]{8}"));
}

}  // namespace
}  // namespace mcp
}  // namespace garuda
