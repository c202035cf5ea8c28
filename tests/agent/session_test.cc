// The session loop end to end over real HTTP on loopback (the scripted
// OpenAI and Anthropic servers of tests/providers), metered by the real
// garuda-budgeter and audited by the real garuda-auditor (both started as
// helper processes), with a scripted person, a scripted stager and the
// applier library in-process (real conflict checks and writes). Every case
// runs for both wire formats.
#include "lib/agent/session.h"

#include <poll.h>
#include <signal.h>
#include <stdlib.h>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/agent/helpers.h"
#include "lib/agent/journal.h"
#include "lib/agent/settings.h"
#include "lib/base/files.h"
#include "lib/budget/meter.h"
#include "lib/changeset/test_tree.h"
#include "lib/ipc/helper_process.h"
#include "lib/provider/client.h"
#include "lib/tools/test_project.h"
#include "tests/agent/fakes.h"
#include "tests/agent/real_helpers.h"
#include "tests/providers/scripted_server.h"

namespace garuda {
namespace agent {
namespace {

using garuda::testing::FakeCommand;
using garuda::testing::FakeStager;
using garuda::testing::LocalApplier;
using garuda::testing::ScriptedPerson;
using provider::ProviderScript;
using provider::ScriptedReply;
using provider::testing::ScriptedServer;
using provider::testing::ServerKind;

using garuda::testing::Runfile;

ScriptedReply Text(const std::string& text, int64_t input = 100,
                   int64_t output = 20) {
  return garuda::testing::TextReply(text, input, output);
}

ScriptedReply ToolCall(const std::string& id, const std::string& name,
                       const std::string& arguments) {
  return garuda::testing::ToolCallReply(id, name, arguments);
}

stager::SessionDescription Described(const std::string& mode, bool sandboxed) {
  stager::SessionDescription description;
  description.set_mode(mode);
  description.set_backend(mode == "staged" ? "copy" : "");
  description.set_profile("default");
  description.set_sandboxed(sandboxed);
  if (!sandboxed) {
    description.set_sandbox_problem(
        "user namespaces are off; fix: sysctl "
        "kernel.unprivileged_userns_clone=1");
  }
  return description;
}

class SessionTest : public ::testing::TestWithParam<ServerKind> {
 protected:
  void SetUp() override {
    home_ = garuda::testing::NewTempDir("home");
    ::setenv("HOME", home_.c_str(), 1);
    project_ = garuda::testing::MakeTestProject(
        "session", [](const std::string&, const std::string& root) {
          garuda::testing::Write(root + "/notes.txt", "old line\n");
        });
    ASSERT_NE(project_.project, nullptr);
  }

  void TearDown() override {
    session_.reset();
    client_.reset();
    budget_.reset();
    audit_.reset();
    budgeter_.reset();
    auditor_.reset();
    server_.reset();
  }

  void StartHelpers(int64_t limit) {
    absl::Status started = garuda::testing::StartRealHelpers(
        project_.root, "test-session", limit, &auditor_, &budgeter_, &audit_,
        &budget_);
    ASSERT_TRUE(started.ok()) << started;
  }

  void StartServer(ProviderScript script) {
    auto server = ScriptedServer::Start(GetParam(), std::move(script));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }

  // A session of `mode` with the helpers, the server and `permissions`.
  void StartSession(const std::string& mode, bool sandboxed = true,
                    bool strict = false, int64_t limit = 200000,
                    uint32_t max_tokens = 1000) {
    StartHelpers(limit);
    // The fake helpers' own copy of the rules, as the real ones read
    // theirs; the person answers their questions.
    consent_ =
        std::make_unique<garuda::testing::FakeConsent>(&person_, &permissions_);
    stager_ = std::make_unique<FakeStager>(
        project_.project.get(), Described(mode, sandboxed), consent_.get());
    applier_ = std::make_unique<LocalApplier>(
        project_.root, JoinPath(home_, "undo"), consent_.get());
    provider::ClientOptions options;
    options.provider = provider::testing::KindName(GetParam());
    options.model = "scripted-model";
    options.base_url = server_->base_url();
    options.max_tokens = max_tokens;
    options.min_output_tokens = 100;
    options.sleep = [this](absl::Duration delay, const CancelFlag*) {
      sleeps_.push_back(delay);
    };
    auto client = provider::ModelClient::Create(std::move(options));
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
    auto journal = Journal::Open(home_, "test-session");
    ASSERT_TRUE(journal.ok()) << journal.status();
    journal_ = std::move(*journal);

    SessionConfig config;
    config.session_id = "test-session";
    config.strict = strict;
    config.strict_source = strict ? "/etc/garuda/policy.json" : "";
    config.description = stager_->Describe().value();
    config.no_model_hint = "no model";
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
    parts.check_helpers = [this]() -> absl::Status {
      absl::Status alive = auditor_->CheckAlive();
      if (!alive.ok()) return alive;
      return budgeter_->CheckAlive();
    };
    auto session = Session::Start(std::move(config), parts);
    start_status_ = session.status();
    if (session.ok()) session_ = std::move(*session);
  }

  // A staged session whose model runs `sed -i s/old/new/ notes.txt` (the
  // scripted stager stages "new line") and then says `final_text`.
  void StartStagedSedSession(const std::string& final_text) {
    ProviderScript script;
    *script.add_replies() = ToolCall(
        "call_1", "bash", R"({"command":"sed -i s/old/new/ notes.txt"})");
    *script.add_replies() = Text(final_text);
    StartServer(script);
    StartSession("staged");
    ASSERT_TRUE(start_status_.ok()) << start_status_;
    FakeCommand sed;
    sed.result.set_kind(stager::CommandResult::EXITED);
    sed.result.set_description("exited with code 0");
    sed.result.set_stdout_data("edited\n");
    sed.writes["notes.txt"] = "new line\n";
    stager_->Script("sed -i s/old/new/ notes.txt", sed);
  }

  // The server with `script`, then a started session of `mode`.
  void Begin(ProviderScript script, const std::string& mode = "direct") {
    StartServer(std::move(script));
    StartSession(mode);
    ASSERT_TRUE(start_status_.ok()) << start_status_;
  }

  TurnOutcome Turn(const std::string& prompt) {
    auto outcome = session_->RunTurn(prompt, &cancel_);
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    return outcome.ok() ? *outcome : TurnOutcome();
  }

  std::string RequestBody(size_t i) { return server_->requests().at(i).body(); }

  budget::BudgetStatus Budget() {
    auto status = budget_->Status();
    EXPECT_TRUE(status.ok()) << status.status();
    return status.ok() ? *status : budget::BudgetStatus();
  }

  // The audit log after the auditor closed it.
  std::string AuditLog() {
    return garuda::testing::ClosedAuditLogs(*audit_, home_);
  }

  std::string Notes() {
    return garuda::testing::Read(project_.root + "/notes.txt");
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
  Permissions permissions_;
  ScriptedPerson person_;
  CancelFlag cancel_;
  std::vector<absl::Duration> sleeps_;
  absl::Status start_status_;
  std::unique_ptr<Session> session_;
};

TEST_P(SessionTest, PlainAnswer) {
  ProviderScript script;
  *script.add_replies() = Text("Hello from the model.");
  ASSERT_NO_FATAL_FAILURE(Begin(script));
  EXPECT_TRUE(absl::StrContains(person_.notices.at(0), "model "));
  EXPECT_TRUE(absl::StrContains(person_.notices.at(0), "commands direct"));
  EXPECT_TRUE(absl::StrContains(person_.notices.at(0), "sandbox on"));
  TurnOutcome outcome = Turn("Say hello");
  EXPECT_EQ(outcome.answer, "Hello from the model.");
  EXPECT_EQ(outcome.stopped, "");
  EXPECT_TRUE(outcome.usage.usage_reported());
  EXPECT_EQ(outcome.usage.input_tokens(), 100);
  EXPECT_EQ(outcome.usage.output_tokens(), 20);
  EXPECT_EQ(person_.text, "Hello from the model.\n");
  ASSERT_EQ(server_->request_count(), 1u);
  EXPECT_TRUE(absl::StrContains(RequestBody(0), "Say hello"));
  // The budget settled to the reported usage.
  EXPECT_EQ(Budget().spent(), 120);
  // The journal holds the conversation and no key.
  auto conversation = ReadConversation(journal_->path());
  ASSERT_TRUE(conversation.ok()) << conversation.status();
  ASSERT_EQ(conversation->size(), 2u);
  EXPECT_EQ(conversation->at(1).text(), "Hello from the model.");
}

TEST_P(SessionTest, StagedBashAskedAppliedAndTheModelIsTold) {
  StartStagedSedSession("Done.");
  if (HasFatalFailure()) return;
  person_.change_answers.push_back(Answer::kApply);

  TurnOutcome outcome = Turn("Change old to new");
  EXPECT_EQ(outcome.answer, "Done.");
  // The question was asked, with the diff; the project changed.
  ASSERT_EQ(person_.change_questions.size(), 1u);
  EXPECT_TRUE(absl::StrContains(person_.change_questions[0].diff, "new line"));
  EXPECT_EQ(Notes(), "new line\n");
  // No permission question: in the sandbox a command runs without one.
  EXPECT_TRUE(person_.permission_questions.empty());
  ASSERT_EQ(stager_->runs.size(), 1u);
  EXPECT_FALSE(stager_->runs[0].on_host());
  // The model got the output and the outcome line.
  ASSERT_EQ(server_->request_count(), 2u);
  EXPECT_TRUE(absl::StrContains(RequestBody(1), "edited"));
  EXPECT_TRUE(absl::StrContains(RequestBody(1), kAppliedLine));
  // The system prompt says who applies or discards.
  EXPECT_TRUE(absl::StrContains(RequestBody(0), "applies the changes"));
  EXPECT_TRUE(absl::StrContains(RequestBody(0),
                                "discard leaves the project unchanged"));
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  EXPECT_TRUE(absl::StartsWith(outcome.tool_calls[0].outcome(), kAppliedLine));
  std::string audit = AuditLog();
  EXPECT_TRUE(absl::StrContains(audit, R"("kind":"tool_call")")) << audit;
  EXPECT_TRUE(absl::StrContains(audit, R"("kind":"command")")) << audit;
  EXPECT_TRUE(absl::StrContains(audit, R"("kind":"question")")) << audit;
  EXPECT_TRUE(absl::StrContains(audit, R"("kind":"applied")")) << audit;
}

TEST_P(SessionTest, StagedBashDiscardedLeavesTheProject) {
  StartStagedSedSession("Understood.");
  if (HasFatalFailure()) return;
  person_.change_answers.push_back(Answer::kDiscard);

  Turn("Change old to new");
  EXPECT_EQ(person_.change_questions.size(), 1u);
  EXPECT_EQ(Notes(), "old line\n");
  EXPECT_TRUE(applier_->reasons.empty());
  EXPECT_TRUE(absl::StrContains(RequestBody(1), kDiscardedLine));
  EXPECT_TRUE(absl::StrContains(AuditLog(), R"("kind":"discard")"));
}

TEST_P(SessionTest, EditOfAFileChangedMeanwhileIsAConflict) {
  ProviderScript script;
  *script.add_replies() = ToolCall(
      "call_1", "edit_file",
      R"({"path":"notes.txt","old_string":"old","new_string":"model"})");
  *script.add_replies() = Text("I will read it again.");
  ASSERT_NO_FATAL_FAILURE(Begin(script));
  // While the person looks at the diff, the file changes on disk.
  person_.on_permission = [this](const PermissionQuestion& question) {
    EXPECT_TRUE(absl::StrContains(question.detail, "model"));
    garuda::testing::Write(project_.root + "/notes.txt", "person's line\n");
  };
  person_.permission_answers.push_back(PermissionAnswer::kYes);

  TurnOutcome outcome = Turn("Edit notes");
  EXPECT_EQ(Notes(), "person's line\n");
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  EXPECT_TRUE(outcome.tool_calls[0].is_error());
  EXPECT_TRUE(absl::StrContains(outcome.tool_calls[0].outcome(), "Conflict"))
      << outcome.tool_calls[0].outcome();
  EXPECT_TRUE(absl::StrContains(RequestBody(1), "Conflict"));
  std::string audit = AuditLog();
  EXPECT_TRUE(absl::StrContains(audit, R"("kind":"conflict")")) << audit;
  EXPECT_TRUE(absl::StrContains(audit, "asked: yes")) << audit;
}

TEST_P(SessionTest, EditAllowedAndApplied) {
  ProviderScript script;
  *script.add_replies() = ToolCall(
      "call_1", "edit_file",
      R"({"path":"notes.txt","old_string":"old","new_string":"model"})");
  *script.add_replies() = Text("Edited.");
  ASSERT_NO_FATAL_FAILURE(Begin(script));
  person_.permission_answers.push_back(PermissionAnswer::kYes);
  Turn("Edit notes");
  EXPECT_EQ(Notes(), "model line\n");
  ASSERT_EQ(person_.permission_questions.size(), 1u);
  EXPECT_EQ(person_.permission_questions[0].summary, "Edit notes.txt");
}

TEST_P(SessionTest, NoPersonAnswersNoAndTheModelIsTold) {
  ProviderScript script;
  *script.add_replies() = ToolCall(
      "call_1", "edit_file",
      R"({"path":"notes.txt","old_string":"old","new_string":"model"})");
  *script.add_replies() = Text("Could not edit.");
  ASSERT_NO_FATAL_FAILURE(Begin(script));
  person_.can_ask = false;
  TurnOutcome outcome = Turn("Edit notes");
  EXPECT_EQ(Notes(), "old line\n");
  EXPECT_TRUE(person_.permission_questions.empty());
  EXPECT_TRUE(absl::StrContains(RequestBody(1), "no person can answer"));
  EXPECT_EQ(outcome.tool_calls.at(0).decision(), "no person to ask: no");
}

TEST_P(SessionTest, AllowRuleSkipsTheQuestionDenyWins) {
  ProviderScript script;
  *script.add_replies() = ToolCall(
      "call_1", "edit_file",
      R"({"path":"notes.txt","old_string":"old","new_string":"model"})");
  *script.add_replies() =
      ToolCall("call_2", "bash", R"({"command":"rm -rf x"})");
  *script.add_replies() = Text("ok");
  StartServer(script);
  ASSERT_TRUE(
      permissions_.AddRule(Verdict::kAllow, "edit_file(*.txt)", "test").ok());
  ASSERT_TRUE(permissions_.AddRule(Verdict::kAllow, "bash(rm *)", "test").ok());
  ASSERT_TRUE(
      permissions_.AddRule(Verdict::kDeny, "bash(rm -rf *)", "test").ok());
  StartSession("direct");
  ASSERT_TRUE(start_status_.ok()) << start_status_;
  person_.can_ask = false;
  TurnOutcome outcome = Turn("Edit and clean");
  EXPECT_EQ(Notes(), "model line\n");
  ASSERT_EQ(outcome.tool_calls.size(), 2u);
  EXPECT_TRUE(absl::StartsWith(outcome.tool_calls[0].decision(), "allowed by"));
  EXPECT_TRUE(absl::StartsWith(outcome.tool_calls[1].decision(), "denied by"));
  EXPECT_TRUE(stager_->runs.empty());
}

TEST_P(SessionTest, WithoutSandboxEveryCommandAsksAndRunsOnTheHost) {
  ProviderScript script;
  *script.add_replies() = ToolCall("call_1", "bash", R"({"command":"make"})");
  *script.add_replies() = ToolCall("call_2", "bash", R"({"command":"make"})");
  *script.add_replies() = Text("Built.");
  StartServer(script);
  StartSession("direct", /*sandboxed=*/false);
  ASSERT_TRUE(start_status_.ok()) << start_status_;
  // The notice at start (the negative control of the strict test below).
  EXPECT_TRUE(absl::StrContains(person_.AllNotices(), "no OS sandbox"));
  person_.permission_answers.push_back(PermissionAnswer::kYesForSession);
  Turn("Build");
  // Asked once; the session answer covers the second call.
  ASSERT_EQ(person_.permission_questions.size(), 1u);
  EXPECT_EQ(person_.permission_questions[0].summary, "Run on the host: make");
  ASSERT_EQ(stager_->runs.size(), 2u);
  EXPECT_TRUE(stager_->runs[0].on_host());
  EXPECT_TRUE(stager_->runs[1].on_host());
  std::string audit = AuditLog();
  EXPECT_TRUE(absl::StrContains(audit, R"("kind":"host_fallback")")) << audit;
  EXPECT_TRUE(absl::StrContains(audit, "asked: yes, and for this session"))
      << audit;
}

TEST_P(SessionTest, StrictWithoutSandboxDoesNotStart) {
  ProviderScript script;
  StartServer(script);
  StartSession("direct", /*sandboxed=*/false, /*strict=*/true);
  EXPECT_TRUE(absl::IsFailedPrecondition(start_status_)) << start_status_;
  EXPECT_TRUE(absl::StrContains(start_status_.message(), "strict profile"));
  EXPECT_TRUE(absl::StrContains(start_status_.message(), "Fix:"));
  EXPECT_TRUE(absl::StrContains(start_status_.message(), "user namespaces"));
  EXPECT_EQ(session_, nullptr);
  EXPECT_TRUE(stager_->runs.empty());
}

TEST_P(SessionTest, StrictBashCallWithOutsideSandboxFailsTheInputCheck) {
  ProviderScript script;
  *script.add_replies() = ToolCall(
      "call_1", "bash", R"({"command":"make","outside_sandbox":true})");
  *script.add_replies() = Text("ok");
  StartServer(script);
  StartSession("direct", /*sandboxed=*/true, /*strict=*/true);
  ASSERT_TRUE(start_status_.ok()) << start_status_;
  person_.permission_answers.push_back(PermissionAnswer::kYes);
  TurnOutcome outcome = Turn("Build");
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  EXPECT_EQ(outcome.tool_calls[0].decision(), "input check failed");
  EXPECT_TRUE(stager_->runs.empty());
  EXPECT_TRUE(person_.permission_questions.empty());
  // The tools sent in strict mode have no outside_sandbox.
  EXPECT_FALSE(absl::StrContains(RequestBody(0), "outside_sandbox"));
}

TEST_P(SessionTest, DefaultProfileOffersOutsideSandboxAndAsksForIt) {
  ProviderScript script;
  *script.add_replies() = ToolCall(
      "call_1", "bash", R"({"command":"make","outside_sandbox":true})");
  *script.add_replies() = Text("ok");
  ASSERT_NO_FATAL_FAILURE(Begin(script, "staged"));
  person_.permission_answers.push_back(PermissionAnswer::kYes);
  Turn("Build");
  EXPECT_TRUE(absl::StrContains(RequestBody(0), "outside_sandbox"));
  ASSERT_EQ(person_.permission_questions.size(), 1u);
  ASSERT_EQ(stager_->runs.size(), 1u);
  EXPECT_TRUE(stager_->runs[0].on_host());
}

TEST_P(SessionTest, StreamWithoutUsageIsAnUnreportedCharge) {
  ProviderScript script;
  ScriptedReply reply = Text("No usage here.");
  reply.set_usage(ScriptedReply::NONE);
  *script.add_replies() = reply;
  ASSERT_NO_FATAL_FAILURE(Begin(script));
  TurnOutcome outcome = Turn("Hi");
  EXPECT_FALSE(outcome.usage.usage_reported());
  budget::BudgetStatus status = Budget();
  EXPECT_GT(status.agents(0).unreported(), 0);
  EXPECT_EQ(status.agents(0).unreported(), status.spent());
  EXPECT_EQ(outcome.usage.charged_tokens(), status.spent());
}

TEST_P(SessionTest, ErrorAfterHttp200IsRetriedAndReservesAgain) {
  ProviderScript script;
  ScriptedReply broken = Text("Half an ans");
  broken.set_fault(ScriptedReply::ERROR_EVENT);
  broken.set_error_type("overloaded_error");
  broken.set_error_message("Overloaded");
  *script.add_replies() = broken;
  *script.add_replies() = Text("Whole answer.");
  ASSERT_NO_FATAL_FAILURE(Begin(script));
  TurnOutcome outcome = Turn("Hi");
  EXPECT_EQ(outcome.answer, "Whole answer.");
  EXPECT_EQ(server_->request_count(), 2u);
  EXPECT_EQ(outcome.usage.requests(), 2u);
  EXPECT_EQ(person_.retries.size(), 1u);
  EXPECT_EQ(Budget().agents(0).requests(), 2);
}

TEST_P(SessionTest, RateLimitThenSuccess) {
  ProviderScript script;
  ScriptedReply limited;
  limited.set_http_status(429);
  limited.set_retry_after("2");
  limited.set_error_type("rate_limit_error");
  limited.set_error_message("slow down");
  *script.add_replies() = limited;
  *script.add_replies() = Text("After the wait.");
  ASSERT_NO_FATAL_FAILURE(Begin(script));
  TurnOutcome outcome = Turn("Hi");
  EXPECT_EQ(outcome.answer, "After the wait.");
  ASSERT_EQ(sleeps_.size(), 1u);
  EXPECT_EQ(sleeps_[0], absl::Seconds(2));
  EXPECT_EQ(Budget().agents(0).requests(), 2);
}

TEST_P(SessionTest, CancelMidStreamKeepsTheReservationSpent) {
  ProviderScript script;
  ScriptedReply held = Text("First words, then the server waits");
  held.set_fault(ScriptedReply::HOLD);
  *script.add_replies() = held;
  *script.add_replies() = Text("Next turn.");
  ASSERT_NO_FATAL_FAILURE(Begin(script));
  // The person presses Ctrl-C as the first words arrive.
  person_.on_text = [this](absl::string_view) { cancel_.Cancel(); };
  TurnOutcome outcome = Turn("Talk");
  EXPECT_EQ(outcome.stopped, "cancelled");
  EXPECT_TRUE(server_->WaitForHangUp(absl::Seconds(10)));
  budget::BudgetStatus status = Budget();
  EXPECT_EQ(status.reserved(), 0);
  EXPECT_GT(status.spent(), 0);  // the whole reservation stayed spent
  // The session goes on: the next prompt is answered.
  person_.on_text = nullptr;
  cancel_.Reset();
  EXPECT_EQ(Turn("Again").answer, "Next turn.");
  EXPECT_TRUE(absl::StrContains(RequestBody(1), "cancelled"));
}

TEST_P(SessionTest, BudgetTooSmallEndsTheTurnWithoutARequest) {
  ProviderScript script;
  *script.add_replies() = Text("never sent");
  StartServer(script);
  StartSession("direct", true, false, /*limit=*/50);
  ASSERT_TRUE(start_status_.ok()) << start_status_;
  TurnOutcome outcome = Turn("Hi");
  EXPECT_TRUE(absl::StartsWith(outcome.stopped, "token budget"))
      << outcome.stopped;
  EXPECT_EQ(server_->request_count(), 0u);
  EXPECT_TRUE(absl::StrContains(person_.AllNotices(), "token budget"));
  // The model is told with the next request (the conversation has it).
  EXPECT_TRUE(
      absl::StrContains(session_->messages().back().text(), "token budget"));
}

TEST_P(SessionTest, ABudgetRefusalAfterAToolCallSendsNothingMore) {
  ProviderScript script;
  ScriptedReply read =
      ToolCall("call_1", "read_file", R"({"path":"notes.txt"})");
  // The first request measures a large context: the next one's estimate
  // (that context plus the result) no longer fits what is left.
  read.set_input_tokens(1200);
  read.set_output_tokens(900);
  *script.add_replies() = read;
  *script.add_replies() = Text("never sent");
  StartServer(script);
  // Enough for the first request (about 1000 output + input), not two.
  StartSession("direct", true, false, /*limit=*/2400, /*max_tokens=*/1000);
  ASSERT_TRUE(start_status_.ok()) << start_status_;
  TurnOutcome outcome = Turn("Read notes");
  EXPECT_EQ(server_->request_count(), 1u);
  EXPECT_TRUE(absl::StartsWith(outcome.stopped, "token budget"))
      << outcome.stopped;
}

TEST_P(SessionTest, ADeadHelperStopsTheSession) {
  ProviderScript script;
  *script.add_replies() =
      ToolCall("call_1", "read_file", R"({"path":"notes.txt"})");
  *script.add_replies() = Text("never");
  ASSERT_NO_FATAL_FAILURE(Begin(script));
  ASSERT_EQ(::kill(auditor_->pid(), SIGKILL), 0);
  // Wait until the kernel says it is gone (its pidfd turns readable).
  struct pollfd dead = {auditor_->pidfd(), POLLIN, 0};
  ASSERT_EQ(::poll(&dead, 1, 10000), 1);
  auto outcome = session_->RunTurn("Read", &cancel_);
  ASSERT_FALSE(outcome.ok());
  EXPECT_TRUE(absl::StrContains(outcome.status().message(), "garuda-auditor"))
      << outcome.status();
  EXPECT_TRUE(absl::StrContains(outcome.status().message(), "signal 9"))
      << outcome.status();
  EXPECT_EQ(server_->request_count(), 0u);
}

TEST_P(SessionTest, SlashCommandsAndPersonCommand) {
  StartStagedSedSession("Done.");
  if (HasFatalFailure()) return;
  FakeCommand ls;
  ls.result.set_description("exited with code 0");
  ls.result.set_stdout_data("notes.txt\n");
  stager_->Script("ls", ls);
  // The stager asks before "!ls" runs on the host (the agent's word that
  // the person typed it is not enough); the person says yes.
  person_.permission_answers.push_back(PermissionAnswer::kYes);
  person_.change_answers.push_back(Answer::kApply);
  garuda::testing::ScriptedLines lines({"/help", "!ls", "change it", "/undo",
                                        "/budget", "/mode", "/clear", "/exit",
                                        "never read"});
  ASSERT_TRUE(RunLines(*session_, lines, &cancel_).ok());
  std::string notices = person_.AllNotices();
  EXPECT_TRUE(absl::StrContains(notices, "/audit verify"));
  ASSERT_EQ(person_.permission_questions.size(), 1u);
  EXPECT_EQ(person_.permission_questions[0].summary, "Run on the host: ls");
  // !ls ran on the host (default profile: the person's own command).
  ASSERT_GE(stager_->runs.size(), 1u);
  EXPECT_EQ(stager_->runs[0].command(), "ls");
  EXPECT_TRUE(stager_->runs[0].on_host());
  // Its output went to the model with the next prompt.
  EXPECT_TRUE(absl::StrContains(RequestBody(0), "notes.txt"));
  // /undo put the file back.
  EXPECT_EQ(Notes(), "old line\n");
  EXPECT_TRUE(absl::StrContains(notices, "limit"));
  EXPECT_TRUE(absl::StrContains(notices, "commands: staged (copy)"));
  EXPECT_TRUE(session_->messages().empty());
}

// The negative control of the !ls above: the person says no at the
// stager's own question, and nothing runs on the host.
TEST_P(SessionTest, APersonCommandTheStagerIsRefusedDoesNotRun) {
  ASSERT_NO_FATAL_FAILURE(Begin(ProviderScript()));
  person_.permission_answers.push_back(PermissionAnswer::kNo);
  auto shown = session_->HandleLine("!rm -rf build", &cancel_);
  ASSERT_TRUE(shown.ok()) << shown.status();
  ASSERT_EQ(person_.permission_questions.size(), 1u);
  EXPECT_EQ(person_.permission_questions[0].summary,
            "Run on the host: rm -rf build");
  EXPECT_TRUE(stager_->runs.empty());
  EXPECT_TRUE(absl::StrContains(person_.AllNotices(), "asked: no"))
      << person_.AllNotices();
}

TEST_P(SessionTest, AnEditOfASensitiveFileAsksDespiteAnAllowRule) {
  ProviderScript script;
  *script.add_replies() = ToolCall("call_1", "write_file",
                                   R"({"path":".env","content":"TOKEN=x\n"})");
  *script.add_replies() = ToolCall(
      "call_2", "edit_file",
      R"({"path":"notes.txt","old_string":"old","new_string":"model"})");
  *script.add_replies() = Text("ok");
  StartServer(script);
  ASSERT_TRUE(permissions_.AddRule(Verdict::kAllow, "write_file", "test").ok());
  ASSERT_TRUE(permissions_.AddRule(Verdict::kAllow, "edit_file", "test").ok());
  StartSession("direct");
  ASSERT_TRUE(start_status_.ok()) << start_status_;
  person_.permission_answers.push_back(PermissionAnswer::kNo);
  TurnOutcome outcome = Turn("Write the token");
  // Asked for .env only; the allowed edit of notes.txt ran without one.
  ASSERT_EQ(person_.permission_questions.size(), 1u);
  EXPECT_EQ(person_.permission_questions[0].summary, "Write .env");
  EXPECT_FALSE(garuda::testing::Snapshot(project_.root).count(".env"));
  EXPECT_EQ(Notes(), "model line\n");
  ASSERT_EQ(outcome.tool_calls.size(), 2u);
  EXPECT_EQ(outcome.tool_calls[0].decision(), "asked: no");
}

TEST_P(SessionTest, ALongCommandOutputIsCutAndTheModelIsTold) {
  ProviderScript script;
  *script.add_replies() = ToolCall("call_1", "bash", R"({"command":"yes"})");
  *script.add_replies() = Text("That was long.");
  ASSERT_NO_FATAL_FAILURE(Begin(script));
  FakeCommand yes;
  yes.result.set_description("exited with code 0");
  yes.result.set_stdout_data(std::string(150000, 'y'));
  stager_->Script("yes", yes);
  Turn("Run yes");
  ASSERT_EQ(server_->request_count(), 2u);
  EXPECT_TRUE(absl::StrContains(RequestBody(1), "[result cut at 100000 of"));
  EXPECT_FALSE(absl::StrContains(RequestBody(1), std::string(100001, 'y')));
}

// Ctrl-C while a command runs: the stager's STOPPED result ends the turn
// (no further request), the person sees "the command was stopped", and the
// model is told with the call's result when the next prompt goes. The
// control: the same command not stopped lets the turn go on.
TEST_P(SessionTest, AStoppedCommandEndsTheTurnAndTheModelIsTold) {
  ProviderScript script;
  *script.add_replies() =
      ToolCall("call_1", "bash", R"({"command":"make long"})");
  *script.add_replies() = Text("Next prompt's answer.");
  ASSERT_NO_FATAL_FAILURE(Begin(script));
  FakeCommand stopped;
  stopped.result.set_kind(stager::CommandResult::STOPPED);
  stopped.result.set_description("stopped: ended on request");
  stopped.result.set_stdout_data("partial\n");
  stopped.during = [this] { cancel_.Cancel(); };
  stager_->Script("make long", stopped);
  TurnOutcome outcome = Turn("Build it");
  EXPECT_EQ(outcome.end, TurnEnd::kCancelled);
  EXPECT_EQ(server_->request_count(), 1u);
  // The turn ends at the stop: no request is begun and cancelled after it.
  EXPECT_FALSE(absl::StrContains(person_.AllNotices(), "the request stopped"))
      << person_.AllNotices();
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  EXPECT_TRUE(absl::StrContains(outcome.tool_calls[0].outcome(),
                                "the command was stopped"));
  ASSERT_FALSE(person_.outcomes.empty());
  EXPECT_TRUE(person_.outcomes.back().stopped);
  EXPECT_EQ(person_.outcomes.back().output, "partial\n");
  cancel_.Reset();
  Turn("What now?");
  ASSERT_EQ(server_->request_count(), 2u);
  EXPECT_TRUE(absl::StrContains(RequestBody(1), "stopped by the person"));
  EXPECT_TRUE(absl::StrContains(RequestBody(1), "partial"));
}

TEST_P(SessionTest, ACommandNotStoppedLetsTheTurnGoOn) {
  ProviderScript script;
  *script.add_replies() =
      ToolCall("call_1", "bash", R"({"command":"make long"})");
  *script.add_replies() = Text("Built.");
  ASSERT_NO_FATAL_FAILURE(Begin(script));
  FakeCommand ran;
  ran.result.set_kind(stager::CommandResult::EXITED);
  ran.result.set_description("exited with code 0");
  stager_->Script("make long", ran);
  TurnOutcome outcome = Turn("Build it");
  EXPECT_EQ(outcome.end, TurnEnd::kAnswered);
  EXPECT_EQ(server_->request_count(), 2u);
  EXPECT_FALSE(absl::StrContains(RequestBody(1), "stopped by the person"));
}

INSTANTIATE_TEST_SUITE_P(BothProviders, SessionTest,
                         ::testing::Values(ServerKind::kOpenAi,
                                           ServerKind::kAnthropic),
                         [](const ::testing::TestParamInfo<ServerKind>& info) {
                           return std::string(
                               provider::testing::KindName(info.param));
                         });

// A project's settings cannot turn a policy's strict off.
TEST(SessionSettingsTest, AProjectCannotTurnStrictOff) {
  SettingsSources sources;
  sources.user_policy.set_profile("strict");
  sources.user_policy_path = "/home/p/.garuda/policy.json";
  sources.project_settings.set_profile("default");
  sources.project_settings_path = "/p/.garuda/settings.json";
  auto settings = LoadSessionSettings(sources);
  ASSERT_TRUE(settings.ok()) << settings.status();
  EXPECT_TRUE(settings->merged.strict());
  // Negative control: without the policy the profile is default.
  sources.user_policy.clear_profile();
  settings = LoadSessionSettings(sources);
  ASSERT_TRUE(settings.ok());
  EXPECT_FALSE(settings->merged.strict());
}

TEST(SessionSettingsTest, AProjectCannotChooseWhereTheModelTrafficGoes) {
  SettingsSources sources;
  sources.user_settings.mutable_model()->set_provider("openai");
  sources.project_settings.mutable_model()->set_base_url(
      "http://evil.example/v1");
  sources.project_settings.mutable_model()->set_name("project-model");
  sources.project_settings_path = "/p/.garuda/settings.json";
  auto settings = LoadSessionSettings(sources);
  ASSERT_TRUE(settings.ok());
  EXPECT_EQ(settings->model.base_url(), "");
  EXPECT_EQ(settings->model.name(), "project-model");
  ASSERT_FALSE(settings->notices.empty());
  EXPECT_TRUE(absl::StrContains(settings->notices.back(), "baseUrl"));
}

}  // namespace
}  // namespace agent
}  // namespace garuda
