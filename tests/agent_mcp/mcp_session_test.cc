// MCP tools in a session, end to end: the scripted model server of
// tests/providers over real HTTP on loopback, the real auditor and
// budgeter, and the published MCP servers (@modelcontextprotocol/
// server-everything and server-filesystem, pinned in tests/mcp) started
// plainly by the test in place of the stager (whose sandbox tests/mcp/hostile
// covers). What is checked here is the agent's side: the rows, the
// permission, the result, the change question, the restart, /mcp, audit.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/agent/journal.h"
#include "lib/agent/mcp_servers.h"
#include "lib/agent/session.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "lib/changeset/test_tree.h"
#include "lib/ipc/helper_process.h"
#include "lib/mcp/client.h"
#include "lib/provider/client.h"
#include "lib/provider/json.h"
#include "lib/tools/test_project.h"
#include "tests/agent/fakes.h"
#include "tests/agent/real_helpers.h"
#include "tests/mcp/plain_server.h"
#include "tests/providers/scripted_server.h"

namespace garuda {
namespace agent {
namespace {

using garuda::testing::FakeCommand;
using garuda::testing::FakeStager;
using garuda::testing::LocalApplier;
using garuda::testing::ScriptedPerson;
using provider::ProviderScript;
using provider::testing::ScriptedServer;
using provider::testing::ServerKind;

constexpr char kEcho[] = "mcp__everything__echo";

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? dir : "/tmp";
}

stager::SessionDescription Described(const std::string& mode) {
  stager::SessionDescription description;
  description.set_mode(mode);
  description.set_backend(mode == "staged" ? "copy" : "");
  description.set_profile("default");
  description.set_sandboxed(true);
  return description;
}

class McpSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    home_ = garuda::testing::NewTempDir("home");
    ::setenv("HOME", home_.c_str(), 1);
    project_ = garuda::testing::MakeTestProject(
        "mcp", [](const std::string&, const std::string& root) {
          garuda::testing::Write(root + "/notes.txt", "old line\n");
        });
    ASSERT_NE(project_.project, nullptr);
  }

  void TearDown() override {
    session_.reset();
    mcp_.reset();
    processes_.clear();
    client_.reset();
    budget_.reset();
    audit_.reset();
    budgeter_.reset();
    auditor_.reset();
    server_.reset();
  }

  // A server of tests/mcp/node_modules, started plainly; its process is
  // kept for a test that stops it.
  McpServerEntry Plain(const std::string& name, const std::string& package,
                       std::vector<std::string> args) {
    return Started(name,
                   mcp::NodeArgv(mcp::PinnedServerScript(package), args));
  }

  // Any program as a server, started plainly.
  McpServerEntry Started(const std::string& name,
                         std::vector<std::string> argv) {
    McpServerEntry entry;
    entry.name = name;
    entry.origin = "the test";
    entry.sandbox = "started plainly by the test";
    entry.start_timeout = absl::Seconds(30);
    entry.call_timeout = absl::Seconds(30);
    entry.start = [this, name, argv]() -> absl::StatusOr<McpStarted> {
      absl::StatusOr<mcp::PlainServer> process = mcp::PlainServer::Start(
          argv, absl::StrCat(TempDir(), "/", name, ".stderr"));
      if (!process.ok()) return process.status();
      McpStarted started;
      started.transport = mcp::StdioTransport(
          std::move(process->to_server), std::move(process->from_server), name);
      processes_.push_back(
          std::make_unique<mcp::PlainServer>(*std::move(process)));
      return started;
    };
    return entry;
  }

  void Begin(ProviderScript script, std::vector<McpServerEntry> servers,
             const std::string& mode = "direct") {
    absl::Status started = garuda::testing::StartRealHelpers(
        project_.root, "mcp-session", 200000, &auditor_, &budgeter_, &audit_,
        &budget_);
    ASSERT_TRUE(started.ok()) << started;
    auto server = ScriptedServer::Start(ServerKind::kOpenAi, std::move(script));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    consent_ =
        std::make_unique<garuda::testing::FakeConsent>(&person_, &permissions_);
    stager_ = std::make_unique<FakeStager>(project_.project.get(),
                                           Described(mode), consent_.get());
    applier_ = std::make_unique<LocalApplier>(
        project_.root, JoinPath(home_, "undo"), consent_.get());
    provider::ClientOptions options;
    options.provider = "openai";
    options.model = "scripted-model";
    options.base_url = server_->base_url();
    options.max_tokens = 1000;
    options.min_output_tokens = 100;
    auto client = provider::ModelClient::Create(std::move(options));
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
    auto journal = Journal::Open(home_, "mcp-session");
    ASSERT_TRUE(journal.ok()) << journal.status();
    journal_ = std::move(*journal);

    McpOptions mcp;
    mcp.root_dir = mcp_root_.empty() ? project_.root : mcp_root_;
    mcp.client_version = "test";
    mcp_ = std::make_unique<McpServers>(mcp);
    mcp_->Start(std::move(servers));

    SessionConfig config;
    config.session_id = "mcp-session";
    config.description = Described(mode);
    config.no_model_hint = "no model";
    config.notices = mcp_->TakeNotices();
    SessionParts parts;
    parts.interaction = &person_;
    parts.project = project_.project.get();
    parts.permissions = &permissions_;
    parts.stager = stager_.get();
    parts.applier = applier_.get();
    parts.audit = audit_.get();
    parts.budget = budget_.get();
    parts.model = client_.get();
    parts.journal = journal_.get();
    parts.mcp = mcp_.get();
    auto session = Session::Start(std::move(config), parts);
    ASSERT_TRUE(session.ok()) << session.status();
    session_ = std::move(*session);
  }

  TurnOutcome Turn(const std::string& prompt) {
    auto outcome = session_->RunTurn(prompt, &cancel_);
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    return outcome.ok() ? *outcome : TurnOutcome();
  }

  std::string RequestBody(size_t i) { return server_->requests().at(i).body(); }
  // Request `i` offered the tool `name` (its "tools" list, not the
  // conversation's earlier calls).
  bool Offered(size_t i, const std::string& name) {
    absl::StatusOr<provider::Value> body =
        provider::ParseJson(RequestBody(i), "request");
    EXPECT_TRUE(body.ok()) << body.status();
    if (!body.ok()) return false;
    const auto* tools = provider::ListMember(*body, "tools");
    if (tools == nullptr) return false;
    for (const provider::Value& tool : tools->values()) {
      const provider::Value* function = provider::Member(tool, "function");
      if (function != nullptr &&
          provider::StringMember(*function, "name") == name) {
        return true;
      }
    }
    return false;
  }
  std::string AuditLog() {
    return garuda::testing::ClosedAuditLogs(*audit_, home_);
  }

  // The model calls echo with `message`, then answers "Done.".
  static ProviderScript EchoScript(const std::string& message) {
    ProviderScript script;
    *script.add_replies() = garuda::testing::ToolCallReply(
        "call_1", kEcho, absl::StrCat(R"({"message":")", message, R"("})"));
    *script.add_replies() = garuda::testing::TextReply("Done.");
    return script;
  }

  std::string home_;
  garuda::testing::TestProject project_;
  std::unique_ptr<ipc::HelperProcess> auditor_, budgeter_;
  std::unique_ptr<AuditSink> audit_;
  std::unique_ptr<budget::BudgetClient> budget_;
  std::unique_ptr<ScriptedServer> server_;
  std::unique_ptr<garuda::testing::FakeConsent> consent_;
  std::unique_ptr<FakeStager> stager_;
  std::unique_ptr<LocalApplier> applier_;
  std::unique_ptr<provider::ModelClient> client_;
  std::unique_ptr<Journal> journal_;
  std::vector<std::unique_ptr<mcp::PlainServer>> processes_;
  std::unique_ptr<McpServers> mcp_;
  // The root offered to the servers ("": the project's).
  std::string mcp_root_;
  Permissions permissions_;
  ScriptedPerson person_;
  CancelFlag cancel_;
  std::unique_ptr<Session> session_;
};

TEST_F(McpSessionTest, AskedYesTheResultComesBackAndIsAudited) {
  ASSERT_NO_FATAL_FAILURE(
      Begin(EchoScript("hello from the model"),
            {Plain("everything", "server-everything", {"stdio"})}));
  // The start is said with the server's tools.
  EXPECT_TRUE(absl::StrContains(person_.AllNotices(), "MCP server everything"))
      << person_.AllNotices();
  person_.permission_answers.push_back(PermissionAnswer::kYes);

  TurnOutcome outcome = Turn("Echo something");
  // The tool was offered to the model by its MCP name.
  EXPECT_TRUE(Offered(0, kEcho));
  EXPECT_EQ(outcome.answer, "Done.");
  // No rule: the person was asked, with the server's name in the question.
  ASSERT_EQ(person_.permission_questions.size(), 1u);
  EXPECT_TRUE(absl::StrContains(person_.permission_questions[0].summary,
                                "everything: echo"))
      << person_.permission_questions[0].summary;
  EXPECT_EQ(person_.permission_questions[0].session_rule.value_or(""), kEcho);
  // The server's answer reached the model.
  ASSERT_EQ(server_->request_count(), 2u);
  EXPECT_TRUE(absl::StrContains(RequestBody(1), "hello from the model"));
  // The report names the server and the arguments' digest.
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  const ToolCallReport& call = outcome.tool_calls[0];
  EXPECT_FALSE(call.is_error()) << call.outcome();
  EXPECT_EQ(call.mcp().server(), "everything");
  EXPECT_EQ(call.mcp().tool(), "echo");
  EXPECT_EQ(call.mcp().outcome(), "ok");
  EXPECT_EQ(call.mcp().arguments_sha256(),
            Sha256Hex(R"({"message":"hello from the model"})"));
  EXPECT_TRUE(absl::StartsWith(call.outcome(), "everything: "))
      << call.outcome();
  std::string audit = AuditLog();
  EXPECT_TRUE(absl::StrContains(audit, R"("kind":"mcp_call")")) << audit;
  EXPECT_TRUE(absl::StrContains(audit, call.mcp().arguments_sha256()));
  EXPECT_TRUE(absl::StrContains(audit, R"("server":"everything")")) << audit;
}

TEST_F(McpSessionTest, AskedNoTheServerIsNotCalled) {
  ASSERT_NO_FATAL_FAILURE(
      Begin(EchoScript("never echoed"),
            {Plain("everything", "server-everything", {"stdio"})}));
  person_.permission_answers.push_back(PermissionAnswer::kNo);
  TurnOutcome outcome = Turn("Echo something");
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  EXPECT_TRUE(outcome.tool_calls[0].is_error());
  EXPECT_EQ(outcome.tool_calls[0].mcp().outcome(), "not run");
  // The model got the refusal; the echo's text came from nowhere.
  EXPECT_TRUE(absl::StrContains(RequestBody(1), "said no"));
  EXPECT_FALSE(absl::StrContains(RequestBody(1), "Echo: never echoed"));
}

TEST_F(McpSessionTest, NoPersonNoRuleIsNo) {
  person_.can_ask = false;
  ASSERT_NO_FATAL_FAILURE(Begin(
      EchoScript("x"), {Plain("everything", "server-everything", {"stdio"})}));
  TurnOutcome outcome = Turn("Echo something");
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  EXPECT_TRUE(outcome.tool_calls[0].is_error());
  EXPECT_TRUE(person_.permission_questions.empty());
}

TEST_F(McpSessionTest, ServerRuleAllowsWithoutAQuestionDenyRuleRefuses) {
  ASSERT_TRUE(permissions_
                  .AddRule(Verdict::kAllow, "mcp__everything",
                           "~/.garuda/settings.json")
                  .ok());
  ProviderScript script = EchoScript("allowed by rule");
  // A second call, of a tool a deny rule names.
  *script.mutable_replies(1) = garuda::testing::ToolCallReply(
      "call_2", "mcp__everything__get-sum", R"({"a":2,"b":40})");
  *script.add_replies() = garuda::testing::TextReply("Done.");
  ASSERT_TRUE(permissions_
                  .AddRule(Verdict::kDeny, "mcp__everything__get-sum",
                           "~/.garuda/settings.json")
                  .ok());
  ASSERT_NO_FATAL_FAILURE(
      Begin(script, {Plain("everything", "server-everything", {"stdio"})}));
  TurnOutcome outcome = Turn("Echo, then add");
  EXPECT_TRUE(person_.permission_questions.empty());
  ASSERT_EQ(outcome.tool_calls.size(), 2u);
  EXPECT_FALSE(outcome.tool_calls[0].is_error());
  EXPECT_TRUE(
      absl::StrContains(outcome.tool_calls[0].decision(), "mcp__everything"))
      << outcome.tool_calls[0].decision();
  EXPECT_TRUE(absl::StrContains(RequestBody(1), "allowed by rule"));
  EXPECT_TRUE(outcome.tool_calls[1].is_error());
  EXPECT_TRUE(absl::StrContains(outcome.tool_calls[1].decision(), "denied by"));
  EXPECT_FALSE(absl::StrContains(RequestBody(2), "is 42"));
}

// A project's settings cannot allow an MCP tool; the same rule in the
// person's settings can (the negative control).
TEST_F(McpSessionTest, AProjectCannotAllowAnMcpTool) {
  SettingsSources sources;
  sources.project_settings.mutable_permissions()->add_allow("mcp__everything");
  sources.project_settings_path = project_.root + "/.garuda/settings.json";
  absl::StatusOr<LoadedPermissions> loaded = LoadPermissions(sources);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  permissions_ = loaded->permissions;
  person_.permission_answers.push_back(PermissionAnswer::kNo);
  ASSERT_NO_FATAL_FAILURE(
      Begin(EchoScript("from the project"),
            {Plain("everything", "server-everything", {"stdio"})}));
  Turn("Echo");
  EXPECT_EQ(person_.permission_questions.size(), 1u);
}

TEST_F(McpSessionTest, AUserRuleAllowsAnMcpTool) {
  SettingsSources sources;
  sources.user_settings.mutable_permissions()->add_allow("mcp__everything");
  sources.user_settings_path = home_ + "/.garuda/settings.json";
  absl::StatusOr<LoadedPermissions> loaded = LoadPermissions(sources);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  permissions_ = loaded->permissions;
  ASSERT_NO_FATAL_FAILURE(
      Begin(EchoScript("from the person"),
            {Plain("everything", "server-everything", {"stdio"})}));
  TurnOutcome outcome = Turn("Echo");
  EXPECT_TRUE(person_.permission_questions.empty());
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  EXPECT_FALSE(outcome.tool_calls[0].is_error());
}

TEST_F(McpSessionTest, AStoppedServerIsRestartedOnceThenDown) {
  ASSERT_TRUE(permissions_
                  .AddRule(Verdict::kAllow, "mcp__everything",
                           "~/.garuda/settings.json")
                  .ok());
  ProviderScript script;
  for (int i = 1; i <= 3; ++i) {
    *script.add_replies() = garuda::testing::ToolCallReply(
        absl::StrCat("call_", i), kEcho,
        absl::StrCat(R"({"message":"turn )", i, R"("})"));
    *script.add_replies() = garuda::testing::TextReply("Done.");
  }
  ASSERT_NO_FATAL_FAILURE(
      Begin(script, {Plain("everything", "server-everything", {"stdio"})}));
  ASSERT_EQ(processes_.size(), 1u);

  // The server dies between turns: the next call restarts it first, and
  // is made on the new process.
  processes_.back()->Stop();
  TurnOutcome second = Turn("Echo after a crash");
  ASSERT_EQ(processes_.size(), 2u);
  ASSERT_EQ(second.tool_calls.size(), 1u);
  EXPECT_FALSE(second.tool_calls[0].is_error())
      << second.tool_calls[0].output();
  EXPECT_TRUE(absl::StrContains(RequestBody(1), "turn 1"));
  std::vector<McpServerView> views = mcp_->Servers();
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].restarts, 1);
  EXPECT_EQ(views[0].state, McpState::kReady);

  // It dies again: no second restart; its tools answer that it is down.
  processes_.back()->Stop();
  TurnOutcome third = Turn("Echo after the second crash");
  EXPECT_EQ(processes_.size(), 2u);
  ASSERT_EQ(third.tool_calls.size(), 1u);
  EXPECT_TRUE(third.tool_calls[0].is_error());
  EXPECT_EQ(third.tool_calls[0].mcp().outcome(), "down");
  EXPECT_TRUE(absl::StrContains(RequestBody(3), "is down")) << RequestBody(3);
  EXPECT_EQ(mcp_->Servers()[0].state, McpState::kDown);
  // A down server's tools are no longer offered.
  Turn("Anything");
  EXPECT_TRUE(Offered(2, kEcho));
  EXPECT_FALSE(Offered(4, kEcho));
}

TEST_F(McpSessionTest, CtrlCCancelsTheCall) {
  ProviderScript script;
  *script.add_replies() = garuda::testing::ToolCallReply(
      "call_1", "mcp__everything__trigger-long-running-operation",
      R"({"duration":20,"steps":40})");
  *script.add_replies() = garuda::testing::TextReply("Done.");
  ASSERT_NO_FATAL_FAILURE(
      Begin(script, {Plain("everything", "server-everything", {"stdio"})}));
  // The person says yes and then presses Ctrl-C: the call starts with the
  // turn's cancel set, and is given up at once.
  person_.permission_answers.push_back(PermissionAnswer::kYes);
  person_.on_permission = [this](const PermissionQuestion&) {
    cancel_.Cancel();
  };
  const absl::Time before = absl::Now();
  TurnOutcome outcome = Turn("Run the long one");
  EXPECT_LT(absl::Now() - before, absl::Seconds(15));
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  EXPECT_EQ(outcome.tool_calls[0].mcp().outcome(), "cancelled");
  EXPECT_TRUE(absl::StrContains(outcome.tool_calls[0].output(), "Ctrl-C"));
}

TEST_F(McpSessionTest, ACallOverItsTimeLimitIsGivenUpAndTheTurnGoesOn) {
  ASSERT_TRUE(permissions_
                  .AddRule(Verdict::kAllow, "mcp__everything",
                           "~/.garuda/settings.json")
                  .ok());
  ProviderScript script;
  *script.add_replies() = garuda::testing::ToolCallReply(
      "call_1", "mcp__everything__trigger-long-running-operation",
      R"({"duration":10,"steps":10})");
  *script.add_replies() = garuda::testing::TextReply("Done.");
  McpServerEntry everything =
      Plain("everything", "server-everything", {"stdio"});
  everything.call_timeout = absl::Seconds(1);
  ASSERT_NO_FATAL_FAILURE(Begin(script, {std::move(everything)}));
  TurnOutcome outcome = Turn("Run the long one");
  EXPECT_EQ(outcome.answer, "Done.");
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  EXPECT_EQ(outcome.tool_calls[0].mcp().outcome(), "timeout");
  EXPECT_TRUE(absl::StrContains(RequestBody(1), "did not answer within 1 s"))
      << RequestBody(1);
  EXPECT_EQ(mcp_->Servers()[0].state, McpState::kReady);
}

TEST_F(McpSessionTest, AServerThatHangsAtStartIsReportedAndTheOthersStart) {
  ProviderScript script;
  *script.add_replies() = garuda::testing::TextReply("Hi.");
  McpServerEntry hangs;
  hangs.name = "hangs";
  hangs.origin = "the test";
  hangs.start_timeout = absl::Seconds(1);
  hangs.start = [this]() -> absl::StatusOr<McpStarted> {
    // Reads its input and never answers.
    absl::StatusOr<mcp::PlainServer> process =
        mcp::PlainServer::Start({"node", "-e", "process.stdin.resume()"},
                                absl::StrCat(TempDir(), "/hangs.stderr"));
    if (!process.ok()) return process.status();
    McpStarted started;
    started.transport =
        mcp::StdioTransport(std::move(process->to_server),
                            std::move(process->from_server), "hangs");
    processes_.push_back(
        std::make_unique<mcp::PlainServer>(*std::move(process)));
    return started;
  };
  ASSERT_NO_FATAL_FAILURE(Begin(
      script,
      {std::move(hangs), Plain("everything", "server-everything", {"stdio"})}));
  EXPECT_TRUE(
      absl::StrContains(person_.AllNotices(), "MCP server hangs did not start"))
      << person_.AllNotices();
  std::vector<McpServerView> views = mcp_->Servers();
  ASSERT_EQ(views.size(), 2u);
  EXPECT_EQ(views[0].state, McpState::kFailed);
  EXPECT_EQ(views[1].state, McpState::kReady);
  TurnOutcome outcome = Turn("Hello");
  EXPECT_EQ(outcome.answer, "Hi.");
  EXPECT_TRUE(Offered(0, kEcho));
}

TEST_F(McpSessionTest, SlashMcpListsRestartsAndReads) {
  ProviderScript script;
  *script.add_replies() = garuda::testing::TextReply("Hi.");
  McpServerEntry broken;
  broken.name = "broken";
  broken.origin = "the test";
  broken.start = []() -> absl::StatusOr<McpStarted> {
    return absl::NotFoundError("no such program: mcp-nowhere");
  };
  ASSERT_NO_FATAL_FAILURE(
      Begin(script, {Plain("everything", "server-everything", {"stdio"}),
                     std::move(broken)}));
  // A server that did not start is said, and the session went on.
  EXPECT_TRUE(absl::StrContains(person_.AllNotices(),
                                "MCP server broken did not start"))
      << person_.AllNotices();
  person_.notices.clear();
  ASSERT_TRUE(session_->HandleLine("/mcp", &cancel_).ok());
  std::string listed = person_.AllNotices();
  EXPECT_TRUE(absl::StrContains(listed, "everything: ready")) << listed;
  EXPECT_TRUE(absl::StrContains(listed, "started plainly by the test"));
  EXPECT_TRUE(absl::StrContains(listed, "echo")) << listed;
  EXPECT_TRUE(absl::StrContains(listed, "broken: failed")) << listed;
  EXPECT_TRUE(absl::StrContains(listed, "mcp-nowhere")) << listed;

  person_.notices.clear();
  ASSERT_TRUE(session_->HandleLine("/mcp restart everything", &cancel_).ok());
  EXPECT_TRUE(absl::StrContains(person_.AllNotices(), "Restarted."))
      << person_.AllNotices();
  EXPECT_EQ(processes_.size(), 2u);

  person_.notices.clear();
  ASSERT_TRUE(session_->HandleLine("/mcp resources everything", &cancel_).ok());
  std::string resources = person_.AllNotices();
  EXPECT_TRUE(absl::StrContains(resources, "demo://")) << resources;

  person_.notices.clear();
  ASSERT_TRUE(session_->HandleLine("/mcp prompts everything", &cancel_).ok());
  EXPECT_TRUE(absl::StrContains(person_.AllNotices(), "prompts"))
      << person_.AllNotices();

  person_.notices.clear();
  ASSERT_TRUE(session_->HandleLine("/mcp restart nobody", &cancel_).ok());
  EXPECT_TRUE(absl::StrContains(person_.AllNotices(), "no MCP server named"))
      << person_.AllNotices();
}

TEST_F(McpSessionTest, ListChangedAddsTheNewTool) {
  ProviderScript script;
  *script.add_replies() = garuda::testing::TextReply("Hi.");
  ASSERT_NO_FATAL_FAILURE(
      Begin(script, {Plain("everything", "server-everything", {"stdio"})}));
  // server-everything adds get-roots-list after initialize and says so
  // with list_changed; a refresh before a request registers its row.
  ToolTable table;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (table.Find("mcp__everything__get-roots-list") == nullptr &&
         absl::Now() < deadline) {
    ASSERT_TRUE(mcp_->AddRows(table).ok());
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_NE(table.Find("mcp__everything__get-roots-list"), nullptr);
  EXPECT_NE(table.Find(kEcho), nullptr);
}

// A server that lists its tool again (list_changed) with another
// description: the next request offers the new one, not the one of the
// first listing. The server says "listing N" in the description of its N-th
// tools/list, and announces list_changed when its tool is called, before
// the call's answer (so the client has read it when the answer arrives).
TEST_F(McpSessionTest, ListChangedRefreshesADescription) {
  const std::string script = TempDir() + "/changing_server.py";
  garuda::testing::Write(script, R"(import json, sys
listings = 0
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    message = json.loads(line)
    ident, method = message.get("id"), message.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "result": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "changing", "version": "1"}}})
    elif method == "tools/list":
        listings += 1
        send({"jsonrpc": "2.0", "id": ident, "result": {"tools": [{
            "name": "greet", "description": "listing %d" % listings,
            "inputSchema": {"type": "object", "properties": {}}}]}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0",
              "method": "notifications/tools/list_changed"})
        send({"jsonrpc": "2.0", "id": ident, "result": {
            "content": [{"type": "text", "text": "hello"}]}})
    elif ident is not None:
        send({"jsonrpc": "2.0", "id": ident,
              "error": {"code": -32601, "message": "not here"}})
)");
  ASSERT_TRUE(
      permissions_
          .AddRule(Verdict::kAllow, "mcp__changing", "~/.garuda/settings.json")
          .ok());
  ProviderScript replies;
  *replies.add_replies() = garuda::testing::ToolCallReply(
      "call_1", "mcp__changing__greet", "{}");
  *replies.add_replies() = garuda::testing::TextReply("Greeted.");
  ASSERT_NO_FATAL_FAILURE(
      Begin(replies, {Started("changing", {"python3", script})}));

  TurnOutcome outcome = Turn("Greet");
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  ASSERT_EQ(server_->requests().size(), 2u);
  EXPECT_TRUE(absl::StrContains(RequestBody(0), "listing 1"));
  EXPECT_TRUE(absl::StrContains(RequestBody(1), "listing 2"))
      << RequestBody(1);
  EXPECT_FALSE(absl::StrContains(RequestBody(1), "listing 1"));
}

// Staged mode: server-filesystem works in a staging copy (as the stager's
// staging view); what it wrote goes to the change question of a staged
// command, and only the applier writes the project.
TEST_F(McpSessionTest, StagedChangesReachTheChangeQuestion) {
  const std::string view = TempDir() + "/staging-view";
  ASSERT_TRUE(MakeDirectories(view, 0700).ok());
  garuda::testing::Write(view + "/notes.txt", "old line\n");
  ASSERT_TRUE(
      permissions_
          .AddRule(Verdict::kAllow, "mcp__files", "~/.garuda/settings.json")
          .ok());
  ProviderScript script;
  *script.add_replies() = garuda::testing::ToolCallReply(
      "call_1", "mcp__files__write_file",
      absl::StrCat(R"({"path":")", view,
                   R"(/notes.txt","content":"written by the server\n"})"));
  *script.add_replies() = garuda::testing::TextReply("Done.");
  McpServerEntry files = Plain("files", "server-filesystem", {view});
  // The fake stager lists what differs in the view as a staged command's
  // changes (a real, sealed change list of the project).
  files.changes = [this, view]() -> absl::StatusOr<CommandService::Ran> {
    FakeCommand collected;
    collected.result.set_kind(stager::CommandResult::EXITED);
    std::string now = garuda::testing::Read(view + "/notes.txt");
    if (now != garuda::testing::Read(project_.root + "/notes.txt")) {
      collected.writes["notes.txt"] = now;
    }
    stager_->Script("collect files", collected);
    stager::RunCommand command;
    command.set_command("collect files");
    return stager_->Run(command);
  };
  person_.change_answers.push_back(Answer::kApply);
  // The stager mounts the view over the project's path; here the view has a
  // path of its own, offered as the root (server-filesystem keeps to it).
  mcp_root_ = view;
  ASSERT_NO_FATAL_FAILURE(Begin(script, {std::move(files)}, "staged"));

  TurnOutcome outcome = Turn("Write the notes");
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  ASSERT_EQ(person_.change_questions.size(), 1u)
      << outcome.tool_calls[0].output() << outcome.tool_calls[0].outcome();
  EXPECT_TRUE(absl::StrContains(person_.change_questions[0].diff,
                                "written by the server"));
  EXPECT_EQ(garuda::testing::Read(project_.root + "/notes.txt"),
            "written by the server\n");
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  ASSERT_EQ(outcome.tool_calls[0].mcp().files_changed_size(), 1);
  EXPECT_EQ(outcome.tool_calls[0].mcp().files_changed(0), "notes.txt");
  EXPECT_TRUE(absl::StrContains(RequestBody(1), kAppliedLine));
  std::string audit = AuditLog();
  EXPECT_TRUE(absl::StrContains(audit, R"("files_changed":["notes.txt"])"))
      << audit;
}

}  // namespace
}  // namespace agent
}  // namespace garuda
