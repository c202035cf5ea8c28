// Child agents (the `task` tool) and compaction end to end (spec T9): the
// scripted provider servers of tests/providers over real HTTP on loopback,
// the real garuda-budgeter (leases, floors) and garuda-auditor as helper
// processes, a scripted person, stager and applier (tests/agent/fakes.h).
// Children send in parallel, so their replies are picked by what their
// requests contain (ScriptedReply.when_body_contains).
#include <signal.h>
#include <stdlib.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "lib/agent/journal.h"
#include "lib/agent/session.h"
#include "lib/base/files.h"
#include "lib/budget/meter.h"
#include "lib/changeset/test_tree.h"
#include "lib/ipc/helper_process.h"
#include "lib/provider/client.h"
#include "lib/provider/json.h"
#include "lib/tools/test_project.h"
#include "tests/agent/fakes.h"
#include "tests/agent/real_helpers.h"
#include "tests/providers/scripted_server.h"

namespace garuda {
namespace agent {
namespace {

using garuda::testing::FakeStager;
using garuda::testing::LocalApplier;
using garuda::testing::Runfile;
using garuda::testing::ScriptedPerson;
using provider::ProviderScript;
using provider::RecordedRequest;
using provider::ScriptedReply;
using provider::testing::ScriptedServer;
using provider::testing::ServerKind;

// In every child's system prompt, never in the parent's.
constexpr char kChildMark[] = "You are a child agent";

ScriptedReply Text(const std::string& text, int64_t input = 100,
                   int64_t output = 20) {
  return garuda::testing::TextReply(text, input, output);
}

std::string TaskArgs(const std::string& description,
                     const std::string& prompt) {
  return absl::StrCat(R"({"description":")", description, R"(","prompt":")",
                      prompt, R"("})");
}

// A reply with one `task` call per (description, prompt).
ScriptedReply Tasks(
    const std::vector<std::pair<std::string, std::string>>& tasks) {
  ScriptedReply reply = Text("Splitting the work.", 100, 20);
  int n = 0;
  for (const auto& [description, prompt] : tasks) {
    provider::ScriptedToolCall* call = reply.add_tool_calls();
    call->set_id(absl::StrCat("task_", ++n));
    call->set_name("task");
    call->set_arguments_json(TaskArgs(description, prompt));
    call->set_argument_pieces(2);
  }
  return reply;
}

// A reply only for the child whose prompt holds `marker`.
ScriptedReply ForChild(ScriptedReply reply, const std::string& marker) {
  reply.add_when_body_contains(kChildMark);
  reply.add_when_body_contains(marker);
  return reply;
}

ScriptedReply ReadNotes(const std::string& id, int64_t input, int64_t output) {
  ScriptedReply reply = garuda::testing::ToolCallReply(
      id, "read_file", R"({"path":"notes.txt"})");
  reply.set_input_tokens(input);
  reply.set_output_tokens(output);
  return reply;
}

// The output limit a request asked for.
int64_t MaxTokensOf(const RecordedRequest& request) {
  absl::StatusOr<provider::Value> body =
      provider::ParseJson(request.body(), "body");
  if (!body.ok()) return -1;
  return provider::TokenCountMember(*body, "max_tokens").value_or(-1);
}

bool FromChild(const RecordedRequest& request, const std::string& marker) {
  return absl::StrContains(request.body(), kChildMark) &&
         absl::StrContains(request.body(), marker);
}

class ChildrenTest : public ::testing::TestWithParam<ServerKind> {
 protected:
  void SetUp() override {
    home_ = garuda::testing::NewTempDir("home");
    ::setenv("HOME", home_.c_str(), 1);
    project_ = garuda::testing::MakeTestProject(
        "children", [](const std::string&, const std::string& root) {
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

  void StartHelpers(int64_t limit, const std::string& session) {
    absl::Status started = garuda::testing::StartRealHelpers(
        project_.root, session, limit, &auditor_, &budgeter_, &audit_,
        &budget_);
    ASSERT_TRUE(started.ok()) << started;
  }

  void StartServer(ProviderScript script) {
    auto server = ScriptedServer::Start(GetParam(), std::move(script),
                                        [this](const RecordedRequest& request) {
                                          if (on_request_) on_request_(request);
                                        });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }

  void StartSession(int64_t limit, ChildSettings agents = ChildSettings(),
                    uint32_t max_tokens = 1000,
                    const std::string& id = "children-session") {
    StartHelpers(limit, id);
    if (HasFatalFailure()) return;
    consent_ =
        std::make_unique<garuda::testing::FakeConsent>(&person_, &permissions_);
    stager::SessionDescription description;
    description.set_mode("direct");
    description.set_profile("default");
    description.set_sandboxed(true);
    stager_ = std::make_unique<FakeStager>(project_.project.get(), description,
                                           consent_.get());
    applier_ = std::make_unique<LocalApplier>(
        project_.root, JoinPath(home_, "undo"), consent_.get());
    provider::ClientOptions options;
    options.provider = provider::testing::KindName(GetParam());
    options.model = "scripted-model";
    options.base_url = server_->base_url();
    options.max_tokens = max_tokens;
    options.min_output_tokens = 100;
    options.sleep = [](absl::Duration, const CancelFlag*) {};
    auto client = provider::ModelClient::Create(std::move(options));
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
    auto journal = Journal::Open(home_, id);
    ASSERT_TRUE(journal.ok()) << journal.status();
    journal_ = std::move(*journal);

    SessionConfig config;
    config.session_id = id;
    config.description = stager_->Describe().value();
    config.no_model_hint = "no model";
    config.agents = agents;
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
    ASSERT_TRUE(session.ok()) << session.status();
    session_ = std::move(*session);
  }

  TurnOutcome Turn(const std::string& prompt) {
    auto outcome = session_->RunTurn(prompt, &cancel_);
    EXPECT_TRUE(outcome.ok()) << outcome.status();
    return outcome.ok() ? *outcome : TurnOutcome();
  }

  budget::BudgetStatus Budget() {
    auto status = budget_->Status();
    EXPECT_TRUE(status.ok()) << status.status();
    return status.ok() ? *status : budget::BudgetStatus();
  }

  // A child row of the budgeter's status, by its agent id ("main.1").
  budget::AgentUsage Row(const budget::BudgetStatus& status,
                         const std::string& agent_id) {
    for (const budget::AgentUsage& agent : status.agents()) {
      if (agent.report_id() == agent_id) return agent;
    }
    ADD_FAILURE() << "no budget row for " << agent_id;
    return budget::AgentUsage();
  }

  std::string AuditLog() {
    return garuda::testing::ClosedAuditLogs(*audit_, home_);
  }

  std::string home_;
  garuda::testing::TestProject project_;
  std::unique_ptr<ipc::HelperProcess> auditor_, budgeter_;
  std::unique_ptr<AuditSink> audit_;
  std::unique_ptr<budget::BudgetClient> budget_;
  std::unique_ptr<ScriptedServer> server_;
  std::function<void(const RecordedRequest&)> on_request_;
  std::unique_ptr<garuda::testing::FakeConsent> consent_;
  std::unique_ptr<FakeStager> stager_;
  std::unique_ptr<LocalApplier> applier_;
  std::unique_ptr<provider::ModelClient> client_;
  std::unique_ptr<Journal> journal_;
  Permissions permissions_;
  ScriptedPerson person_;
  CancelFlag cancel_;
  std::unique_ptr<Session> session_;
};

// ---- Three parallel children and a small parent budget ----

constexpr int64_t kStepInput = 300;
constexpr int64_t kStepOutput = 900;
const char* const kMarkers[] = {"alpha-work", "beta-work", "gamma-work"};

// The parent splits into three children that each read until their lease
// runs out; every request reports kStepInput + kStepOutput.
ProviderScript ThreeGreedyChildren() {
  ProviderScript script;
  *script.add_replies() = Tasks(
      {{"alpha", kMarkers[0]}, {"beta", kMarkers[1]}, {"gamma", kMarkers[2]}});
  for (const char* marker : kMarkers) {
    for (int i = 0; i < 50; ++i) {
      *script.add_replies() = ForChild(
          ReadNotes(absl::StrCat("read_", i), kStepInput, kStepOutput), marker);
    }
  }
  *script.add_replies() = Text("All three reported.", kStepInput, 20);
  return script;
}

TEST_P(ChildrenTest, ThreeParallelChildrenStayInsideTheCap) {
  ASSERT_NO_FATAL_FAILURE(StartServer(ThreeGreedyChildren()));
  ChildSettings agents;
  agents.child_token_budget = 12000;
  const int64_t limit = 130000;
  ASSERT_NO_FATAL_FAILURE(StartSession(limit, agents));
  TurnOutcome outcome = Turn("Split it three ways");

  // The parent still gets its final answer after the children used the rest.
  EXPECT_EQ(outcome.answer, "All three reported.");
  const std::vector<RecordedRequest> requests = server_->requests();
  int64_t reported = 0;
  int children_requests = 0;
  for (const RecordedRequest& request : requests) {
    reported += kStepInput;
    if (absl::StrContains(request.body(), kChildMark)) {
      ++children_requests;
      reported += kStepOutput;
      // Never more output than a lease can pay for.
      EXPECT_LE(MaxTokensOf(request), 1000);
    } else {
      reported += 20;
    }
  }
  EXPECT_GT(children_requests, 3);  // the children did work
  EXPECT_LE(reported, limit);
  budget::BudgetStatus status = Budget();
  EXPECT_LE(status.spent(), limit);
  EXPECT_EQ(status.reserved(), 0);
  // All three ran: each got a lease and ended with what it had.
  ASSERT_EQ(outcome.tool_calls.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const ChildAgentReport& child = outcome.tool_calls[i].child();
    EXPECT_EQ(child.description(),
              std::vector<std::string>({"alpha", "beta", "gamma"})[i]);
    EXPECT_GT(child.lease_tokens(), 0u);
    EXPECT_GT(child.tool_calls_size(), 0);
    EXPECT_LE(child.usage().charged_tokens(), child.lease_tokens());
  }
  // The report agrees with the ledger: every agent's charge is in it.
  EXPECT_EQ(outcome.usage.charged_tokens(), status.spent());
  EXPECT_EQ(outcome.usage.requests(), requests.size());
}

// The control: the same three children, each on a budget of its own as
// large as the session's (what separate budgets allow), go over the cap.
TEST_P(ChildrenTest, ControlThreeIndependentBudgetsGoOverTheCap) {
  const int64_t limit = 130000;
  int64_t spent = 0;
  for (const char* marker : kMarkers) {
    ProviderScript script;
    for (int i = 0; i < 50; ++i) {
      *script.add_replies() =
          ReadNotes(absl::StrCat("read_", i), kStepInput, kStepOutput);
    }
    ASSERT_NO_FATAL_FAILURE(StartServer(script));
    ASSERT_NO_FATAL_FAILURE(StartSession(limit, ChildSettings(), 1000,
                                         absl::StrCat("alone-", marker)));
    Turn(marker);
    spent += Budget().spent();
    TearDown();
  }
  EXPECT_GT(spent, limit);
}

// Issue 28, as a new user met it: a cap of 60 000, model.maxTokens 2000,
// three children in one response, each calling a tool a dozen times, each
// step reporting about what it reserved. Every child runs and makes at
// least two requests, most of the cap is spent, the parent still answers.
ProviderScript ThreeChildrenOfADozenSteps() {
  ProviderScript script;
  *script.add_replies() = Tasks(
      {{"alpha", kMarkers[0]}, {"beta", kMarkers[1]}, {"gamma", kMarkers[2]}});
  for (const char* marker : kMarkers) {
    ScriptedReply wrap_up = ForChild(
        Text(absl::StrCat("Findings of ", marker, ": \"quoted\"\n"), 1600, 200),
        marker);
    wrap_up.add_when_body_contains("your findings so far");
    *script.add_replies() = wrap_up;
    for (int i = 0; i < 12; ++i) {
      *script.add_replies() = ForChild(
          ReadNotes(absl::StrCat("read_", i), 1500 + 100 * i, 1500), marker);
    }
    *script.add_replies() =
        ForChild(Text(absl::StrCat("Done with ", marker), 2800, 300), marker);
  }
  *script.add_replies() = Text("All three reported.", 2000, 20);
  return script;
}

TEST_P(ChildrenTest, ThreeChildrenAtSixtyThousandAllRunAndSpendTheCap) {
  ASSERT_NO_FATAL_FAILURE(StartServer(ThreeChildrenOfADozenSteps()));
  const int64_t limit = 60000;
  ASSERT_NO_FATAL_FAILURE(StartSession(limit, ChildSettings(), 2000));
  TurnOutcome outcome = Turn("Split it three ways");
  EXPECT_EQ(outcome.answer, "All three reported.") << outcome.stopped;
  ASSERT_EQ(outcome.tool_calls.size(), 3u);
  for (const ToolCallReport& call : outcome.tool_calls) {
    EXPECT_FALSE(absl::StartsWith(call.child().outcome(), "refused"))
        << call.child().outcome();
    EXPECT_GE(call.child().usage().requests(), 2u) << call.DebugString();
  }
  budget::BudgetStatus status = Budget();
  EXPECT_LE(status.spent(), limit);
  EXPECT_GE(status.spent(), limit * 6 / 10);
  // The parent's model was told what is left after each child.
  const std::string last = server_->requests().back().body();
  EXPECT_TRUE(absl::StrContains(last, "tokens left to reserve")) << last;
}

// The control: today's floor, each pending answer at its worst case
// (about 30 000 tokens), refuses two of the three before they start.
TEST_P(ChildrenTest, ControlTheWorstCaseFloorRefusesTwoOfThree) {
  ASSERT_NO_FATAL_FAILURE(StartServer(ThreeChildrenOfADozenSteps()));
  ChildSettings agents;
  agents.worst_case_floor = true;
  ASSERT_NO_FATAL_FAILURE(StartSession(60000, agents, 2000));
  TurnOutcome outcome = Turn("Split it three ways");
  ASSERT_EQ(outcome.tool_calls.size(), 3u);
  int refused = 0;
  for (const ToolCallReport& call : outcome.tool_calls) {
    refused += absl::StartsWith(call.child().outcome(), "refused") ? 1 : 0;
  }
  EXPECT_EQ(refused, 2);
  EXPECT_LT(Budget().spent(), 60000 * 6 / 10);
}

// A sibling that answers at once returns most of its lease; the child that
// still works gets it when its own lease runs out (ExtendChild), instead of
// leaving it stranded with the parent.
TEST_P(ChildrenTest, WhatASiblingReturnsGoesToTheChildStillWorking) {
  ProviderScript script;
  *script.add_replies() =
      Tasks({{"quick", "quick-work"}, {"greedy", "greedy-work"}});
  *script.add_replies() = ForChild(Text("Quick answer."), "quick-work");
  for (int i = 0; i < 60; ++i) {
    *script.add_replies() =
        ForChild(ReadNotes(absl::StrCat("read_", i), kStepInput, kStepOutput),
                 "greedy-work");
  }
  *script.add_replies() = Text("Both reported.", kStepInput, 20);
  ASSERT_NO_FATAL_FAILURE(StartServer(script));
  const int64_t limit = 60000;
  ASSERT_NO_FATAL_FAILURE(StartSession(limit));
  TurnOutcome outcome = Turn("Two parts");
  EXPECT_EQ(outcome.answer, "Both reported.") << outcome.stopped;
  ASSERT_EQ(outcome.tool_calls.size(), 2u);
  // Each started with about half of what was above the floor; the greedy
  // one ended with more than half of the cap.
  const ChildAgentReport& greedy = outcome.tool_calls[1].child();
  EXPECT_GT(greedy.lease_tokens(), static_cast<uint32_t>(limit / 2))
      << greedy.DebugString();
  EXPECT_EQ(greedy.returned_tokens() + greedy.usage().charged_tokens(),
            greedy.lease_tokens());
  budget::BudgetStatus status = Budget();
  EXPECT_LE(status.spent(), limit);
  EXPECT_GE(status.spent(), limit * 6 / 10);
}

// One greedy child whose own limit (150 000) is more than the session has:
// its lease stops at the parent's floor, so the parent still answers. The
// control: without the floor the lease takes it all and the parent's final
// request is refused. The prompt is long (about 5000 tokens) so that the
// parent's final request needs more than a child can leave unused.
const std::string kLongPrompt = "Go. " + std::string(20000, 'p');
ProviderScript OneGreedyChild() {
  ProviderScript script;
  *script.add_replies() = Tasks({{"greedy", "greedy-work"}});
  // Its wrap-up reports no usage: its whole reservation, the rest of the
  // lease, stays spent.
  ScriptedReply wrap_up = ForChild(Text("What I found."), "greedy-work");
  wrap_up.add_when_body_contains("your findings so far");
  wrap_up.set_usage(ScriptedReply::NONE);
  *script.add_replies() = wrap_up;
  for (int i = 0; i < 80; ++i) {
    *script.add_replies() =
        ForChild(ReadNotes(absl::StrCat("read_", i), kStepInput, kStepOutput),
                 "greedy-work");
  }
  *script.add_replies() = Text("The parent's own answer.", kStepInput, 20);
  return script;
}

TEST_P(ChildrenTest, TheParentKeepsItsFloorForTheFinalAnswer) {
  ASSERT_NO_FATAL_FAILURE(StartServer(OneGreedyChild()));
  ASSERT_NO_FATAL_FAILURE(StartSession(60000));
  TurnOutcome outcome = Turn(kLongPrompt);
  EXPECT_EQ(outcome.answer, "The parent's own answer.") << outcome.stopped;
  EXPECT_EQ(outcome.end, TurnEnd::kAnswered);
  const ChildAgentReport& child = outcome.tool_calls.at(0).child();
  // The floor held back the parent's next request (the long prompt, about
  // 6000 tokens with its output) and what it keeps for the answer (5120).
  EXPECT_LT(child.lease_tokens(), 60000u - 10000u);
  EXPECT_GT(child.usage().requests(), 3u);
  EXPECT_EQ(child.returned_tokens() + child.usage().charged_tokens(),
            child.lease_tokens());
  EXPECT_LE(Budget().spent(), 60000);
}

TEST_P(ChildrenTest, ControlWithoutTheFloorTheParentCannotAnswer) {
  ASSERT_NO_FATAL_FAILURE(StartServer(OneGreedyChild()));
  ChildSettings agents;
  agents.keep_floor = false;
  ASSERT_NO_FATAL_FAILURE(StartSession(60000, agents));
  TurnOutcome outcome = Turn(kLongPrompt);
  EXPECT_EQ(outcome.end, TurnEnd::kBudget) << outcome.answer;
  EXPECT_GT(outcome.tool_calls.at(0).child().lease_tokens(), 60000u - 10000u);
  EXPECT_NE(outcome.answer, "The parent's own answer.");
}

TEST_P(ChildrenTest, AChildThatStopsEarlyReturnsItsUnusedLease) {
  ProviderScript script;
  *script.add_replies() = Tasks({{"look", "quick-look"}});
  *script.add_replies() =
      ForChild(Text("Found it: line one.", 200, 30), "quick-look");
  *script.add_replies() = Text("The child found it.");
  ASSERT_NO_FATAL_FAILURE(StartServer(script));
  ChildSettings agents;
  agents.child_token_budget = 50000;
  ASSERT_NO_FATAL_FAILURE(StartSession(400000, agents));
  TurnOutcome outcome = Turn("Look");
  EXPECT_EQ(outcome.answer, "The child found it.");
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  const ToolCallReport& call = outcome.tool_calls[0];
  EXPECT_EQ(call.tool(), "task") << call.DebugString();
  EXPECT_EQ(call.child().outcome(), "answered") << call.DebugString();
  EXPECT_EQ(call.child().usage().charged_tokens(), 230u);
  EXPECT_EQ(call.child().lease_tokens(), 50000u);
  // What it did not use went back to the parent.
  EXPECT_EQ(call.child().returned_tokens(), 50000u - 230u);
  // The parent's model got the child's answer as the task's result.
  EXPECT_TRUE(absl::StrContains(server_->requests().back().body(),
                                "Found it: line one."));
  budget::BudgetStatus status = Budget();
  EXPECT_FALSE(Row(status, "main.1").open());
  EXPECT_EQ(status.spent(), outcome.usage.charged_tokens());
  EXPECT_EQ(status.left(), 400000 - status.spent());
  // The person saw it end.
  ASSERT_EQ(person_.outcomes.size(), 1u);
  EXPECT_EQ(person_.outcomes[0].outcome, "task ended: 230 tokens (look)");
  const std::string audit = AuditLog();
  EXPECT_TRUE(absl::StrContains(audit, "child_start")) << audit;
  EXPECT_TRUE(absl::StrContains(audit, "child_end")) << audit;
}

TEST_P(ChildrenTest, AChildsToolCallsAreShownIndentedUnderIt) {
  ProviderScript script;
  *script.add_replies() = Tasks({{"read notes", "read-notes"}});
  *script.add_replies() = ForChild(ReadNotes("r1", 100, 20), "read-notes");
  *script.add_replies() = ForChild(Text("It says old line."), "read-notes");
  *script.add_replies() = Text("Done.");
  ASSERT_NO_FATAL_FAILURE(StartServer(script));
  ASSERT_NO_FATAL_FAILURE(StartSession(400000));
  TurnOutcome outcome = Turn("Read");
  EXPECT_EQ(outcome.answer, "Done.");
  EXPECT_TRUE(absl::StrContains(person_.AllNotices(), "  -> read_file"))
      << person_.AllNotices();
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  ASSERT_EQ(outcome.tool_calls[0].child().tool_calls_size(), 1);
  EXPECT_EQ(outcome.tool_calls[0].child().tool_calls(0).tool(), "read_file");
  // The child's events carry its agent id; the parent's none (control).
  const std::string audit = AuditLog();
  bool child_tagged = false, parent_tagged = false;
  for (absl::string_view line : absl::StrSplit(audit, '\n')) {
    if (absl::StrContains(line, "read_file")) {
      child_tagged =
          child_tagged || absl::StrContains(line, R"("agent":"main.1")");
    }
    if (absl::StrContains(line, "session_start")) {
      parent_tagged = absl::StrContains(line, R"("agent")");
    }
  }
  EXPECT_TRUE(child_tagged) << audit;
  EXPECT_FALSE(parent_tagged) << audit;
}

TEST_P(ChildrenTest, TheDepthLimitTakesTheTaskToolAway) {
  ProviderScript script;
  *script.add_replies() = Tasks({{"outer", "outer-work"}});
  // The child tries a task anyway: refused at the limit.
  *script.add_replies() =
      ForChild(Tasks({{"inner", "inner-work"}}), "outer-work");
  *script.add_replies() = ForChild(Text("Did it myself."), "outer-work");
  *script.add_replies() = Text("Done.");
  ASSERT_NO_FATAL_FAILURE(StartServer(script));
  ChildSettings agents;
  agents.max_depth = 1;
  ASSERT_NO_FATAL_FAILURE(StartSession(400000, agents));
  TurnOutcome outcome = Turn("Go");
  EXPECT_EQ(outcome.answer, "Done.");
  const std::vector<RecordedRequest> requests = server_->requests();
  ASSERT_EQ(requests.size(), 4u);
  // The parent was offered task (its control), the child was not.
  EXPECT_TRUE(absl::StrContains(requests[0].body(), R"("task")"));
  EXPECT_TRUE(FromChild(requests[1], "outer-work"));
  EXPECT_FALSE(absl::StrContains(requests[1].body(), R"("name":"task")"));
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  const ChildAgentReport& child = outcome.tool_calls[0].child();
  ASSERT_EQ(child.tool_calls_size(), 1);
  EXPECT_TRUE(child.tool_calls(0).is_error());
  EXPECT_TRUE(absl::StrContains(child.tool_calls(0).output(), "maxDepth"));
  EXPECT_EQ(Budget().agents_size(), 2);  // no grandchild lease was opened
}

TEST_P(ChildrenTest, NestedChildrenWithinTheDepthLimit) {
  ProviderScript script;
  *script.add_replies() = Tasks({{"outer", "outer-work"}});
  *script.add_replies() =
      ForChild(Tasks({{"inner", "inner-work"}}), "outer-work");
  *script.add_replies() = ForChild(Text("inner result"), "inner-work");
  *script.add_replies() = ForChild(Text("outer result"), "outer-work");
  *script.add_replies() = Text("Done.");
  ASSERT_NO_FATAL_FAILURE(StartServer(script));
  ASSERT_NO_FATAL_FAILURE(StartSession(400000));
  TurnOutcome outcome = Turn("Go");
  EXPECT_EQ(outcome.answer, "Done.");
  const ChildAgentReport& outer = outcome.tool_calls.at(0).child();
  ASSERT_EQ(outer.tool_calls_size(), 1);
  const ChildAgentReport& inner = outer.tool_calls(0).child();
  EXPECT_EQ(inner.agent_id(), "main.1.1");
  EXPECT_EQ(inner.depth(), 2u);
  budget::BudgetStatus status = Budget();
  EXPECT_EQ(status.agents_size(), 3);
  EXPECT_EQ(status.spent(), outcome.usage.charged_tokens());
  // /budget shows both, the inner one under the outer one.
  garuda::testing::ScriptedLines lines({"/budget", "/exit"});
  ASSERT_TRUE(RunLines(*session_, lines, &cancel_).ok());
  const std::string shown = person_.AllNotices();
  EXPECT_TRUE(absl::StrContains(shown, "main.1 outer")) << shown;
  EXPECT_TRUE(absl::StrContains(shown, "    main.1.1 inner")) << shown;
  EXPECT_TRUE(absl::StrContains(shown, "charged with no reported usage"));
}

TEST_P(ChildrenTest, TheParallelLimitMakesTheRestWait) {
  ProviderScript script;
  *script.add_replies() =
      Tasks({{"one", "first-work"}, {"two", "second-work"}});
  *script.add_replies() = ForChild(ReadNotes("r1", 100, 20), "first-work");
  *script.add_replies() = ForChild(Text("first done"), "first-work");
  *script.add_replies() = ForChild(ReadNotes("r2", 100, 20), "second-work");
  *script.add_replies() = ForChild(Text("second done"), "second-work");
  *script.add_replies() = Text("Both done.");
  ASSERT_NO_FATAL_FAILURE(StartServer(script));
  ChildSettings agents;
  agents.max_parallel = 1;
  ASSERT_NO_FATAL_FAILURE(StartSession(400000, agents));
  TurnOutcome outcome = Turn("Two things");
  EXPECT_EQ(outcome.answer, "Both done.");
  const std::vector<RecordedRequest> requests = server_->requests();
  ASSERT_EQ(requests.size(), 6u);
  // One at a time: the second child starts after the first ended.
  EXPECT_TRUE(FromChild(requests[1], "first-work"));
  EXPECT_TRUE(FromChild(requests[2], "first-work"));
  EXPECT_TRUE(FromChild(requests[3], "second-work"));
  EXPECT_TRUE(FromChild(requests[4], "second-work"));
  // Results in call order.
  ASSERT_EQ(outcome.tool_calls.size(), 2u);
  EXPECT_EQ(outcome.tool_calls[0].output(), "first done");
  EXPECT_EQ(outcome.tool_calls[1].output(), "second done");
}

TEST_P(ChildrenTest, ALongAnswerIsCutAtTwentyThousandCharacters) {
  ProviderScript script;
  *script.add_replies() = Tasks({{"long", "long-work"}});
  *script.add_replies() =
      ForChild(Text(std::string(30000, 'x'), 100, 7500), "long-work");
  *script.add_replies() = Text("Done.");
  ASSERT_NO_FATAL_FAILURE(StartServer(script));
  ChildSettings agents;
  agents.child_token_budget = 50000;
  ASSERT_NO_FATAL_FAILURE(StartSession(400000, agents, 8000));
  TurnOutcome outcome = Turn("Go");
  ASSERT_EQ(outcome.tool_calls.size(), 1u);
  EXPECT_TRUE(outcome.tool_calls[0].child().answer_cut());
  const std::string body = server_->requests().back().body();
  EXPECT_TRUE(absl::StrContains(body, "answer was cut at 20000 characters"));
  EXPECT_FALSE(absl::StrContains(body, std::string(20000, 'x')));
}

TEST_P(ChildrenTest, TheWrapUpRequestIsReservedAndAnswers) {
  ProviderScript script;
  *script.add_replies() = Tasks({{"tight", "tight-work"}});
  *script.add_replies() =
      ForChild(Text("Findings so far: none yet."), "tight-work");
  *script.add_replies() = Text("Done.");
  ASSERT_NO_FATAL_FAILURE(StartServer(script));
  // A lease too small for a step with its whole output limit (1000), large
  // enough for the wrap-up with what is left.
  ChildSettings agents;
  agents.child_token_budget = 2000;
  ASSERT_NO_FATAL_FAILURE(StartSession(400000, agents, 1000));
  TurnOutcome outcome = Turn("Go");
  const std::vector<RecordedRequest> requests = server_->requests();
  ASSERT_EQ(requests.size(), 3u);
  const RecordedRequest& wrap_up = requests[1];
  EXPECT_TRUE(FromChild(wrap_up, "tight-work"));
  EXPECT_TRUE(absl::StrContains(wrap_up.body(), "your findings so far"));
  // Reserved like a main call: system prompt and tools included, its
  // output limit lowered to fit the lease.
  EXPECT_TRUE(absl::StrContains(wrap_up.body(), "read_file"));
  EXPECT_LT(MaxTokensOf(wrap_up), 1000);
  EXPECT_GE(MaxTokensOf(wrap_up), 100);
  const ChildAgentReport& child = outcome.tool_calls.at(0).child();
  EXPECT_EQ(child.outcome(), "wrapped up (token budget)");
  EXPECT_EQ(outcome.tool_calls[0].output(), "Findings so far: none yet.");
  EXPECT_LE(child.usage().charged_tokens(), 2000u);
}

TEST_P(ChildrenTest, WithoutRoomForTheWrapUpTheChildSaysBudgetExhausted) {
  ProviderScript script;
  *script.add_replies() = Tasks({{"tiny", "tiny-work"}});
  *script.add_replies() = Text("Done.");
  ASSERT_NO_FATAL_FAILURE(StartServer(script));
  ChildSettings agents;
  agents.child_token_budget = 200;  // less than any request's input
  ASSERT_NO_FATAL_FAILURE(StartSession(400000, agents, 1000));
  TurnOutcome outcome = Turn("Go");
  EXPECT_EQ(outcome.answer, "Done.");
  EXPECT_EQ(server_->request_count(), 2u);  // the child sent nothing
  const ToolCallReport& call = outcome.tool_calls.at(0);
  EXPECT_EQ(call.child().outcome(), "budget exhausted");
  EXPECT_TRUE(
      absl::StrContains(call.output(), R"("status":"budget_exhausted")"))
      << call.output();
  EXPECT_EQ(call.child().returned_tokens(), 200u);
}

// The structured answer stays whole JSON inside the cap, even when what
// the child had (its last text, 30 000 characters) is longer than the cap.
TEST_P(ChildrenTest, ABudgetExhaustedAnswerIsWholeJsonInsideTheCap) {
  ProviderScript script;
  *script.add_replies() = Tasks({{"wordy", "wordy-work"}});
  ScriptedReply long_step = ReadNotes("r1", 100, 20);
  long_step.set_text(std::string(30000, 'w'));
  *script.add_replies() = ForChild(long_step, "wordy-work");
  *script.add_replies() = Text("Done.");
  ASSERT_NO_FATAL_FAILURE(StartServer(script));
  ChildSettings agents;
  agents.child_token_budget = 6000;  // one step, then not even the wrap-up
  ASSERT_NO_FATAL_FAILURE(StartSession(400000, agents, 1000));
  TurnOutcome outcome = Turn("Go");
  EXPECT_EQ(outcome.answer, "Done.");
  const ToolCallReport& call = outcome.tool_calls.at(0);
  EXPECT_EQ(call.child().outcome(), "budget exhausted") << call.output();
  absl::StatusOr<provider::Value> answer =
      provider::ParseJson(call.output(), "the child's answer");
  ASSERT_TRUE(answer.ok()) << call.output().substr(0, 300);
  EXPECT_EQ(provider::StringMember(*answer, "status"), "budget_exhausted");
  const std::string last_text = provider::StringMember(*answer, "last_text");
  EXPECT_FALSE(last_text.empty());
  EXPECT_LT(last_text.size(), 30000u);
  EXPECT_LE(call.output().size(), 20000u);
  EXPECT_FALSE(call.child().answer_cut());  // it fit without the cut
}

TEST_P(ChildrenTest, AFailedRequestWithNoUsageKeepsItsReservation) {
  ProviderScript script;
  *script.add_replies() = Tasks({{"fails", "failing-work"}});
  ScriptedReply refused;
  refused.set_http_status(400);
  refused.set_error_type("invalid_request_error");
  refused.set_error_message("scripted refusal");
  *script.add_replies() = ForChild(refused, "failing-work");
  *script.add_replies() = Text("Done.");
  ASSERT_NO_FATAL_FAILURE(StartServer(script));
  ASSERT_NO_FATAL_FAILURE(StartSession(400000));
  TurnOutcome outcome = Turn("Go");
  EXPECT_EQ(outcome.answer, "Done.");
  const ChildAgentReport& child = outcome.tool_calls.at(0).child();
  EXPECT_TRUE(absl::StartsWith(child.outcome(), "failed: ")) << child.outcome();
  budget::BudgetStatus status = Budget();
  const budget::AgentUsage row = Row(status, "main.1");
  EXPECT_GT(row.unreported(), 1000);  // its whole reservation, no usage came
  EXPECT_EQ(row.spent(), row.unreported());
  EXPECT_EQ(child.usage().charged_tokens(), row.spent());
  EXPECT_EQ(status.spent(), outcome.usage.charged_tokens());
}

TEST_P(ChildrenTest, CtrlCCancelsTheChildrenAndKeepsTheirReservationsSpent) {
  ProviderScript script;
  *script.add_replies() = Tasks({{"held", "held-work"}});
  ScriptedReply held = Text("thinking");
  held.set_fault(ScriptedReply::HOLD);
  *script.add_replies() = ForChild(held, "held-work");
  *script.add_replies() = Text("never sent");
  ASSERT_NO_FATAL_FAILURE(StartServer(script));
  on_request_ = [this](const RecordedRequest& request) {
    if (absl::StrContains(request.body(), kChildMark)) cancel_.Cancel();
  };
  ASSERT_NO_FATAL_FAILURE(StartSession(400000));
  TurnOutcome outcome = Turn("Go");
  EXPECT_EQ(outcome.end, TurnEnd::kCancelled);
  // No request after the cancel: the parent did not go on.
  EXPECT_EQ(server_->request_count(), 2u);
  budget::BudgetStatus status = Budget();
  EXPECT_EQ(status.reserved(), 0);
  const budget::AgentUsage row = Row(status, "main.1");
  EXPECT_FALSE(row.open());
  EXPECT_GT(row.unreported(), 0);  // the open reservation stayed spent
  EXPECT_EQ(outcome.tool_calls.at(0).child().outcome(), "cancelled");
}

// ---- Compaction ----

TEST_P(ChildrenTest, CompactReservesItsSummaryAndResumeContinuesFromIt) {
  ProviderScript script;
  *script.add_replies() = Text("First answer.", 100, 20);
  ScriptedReply summary = Text("SUMMARY: the person said hi.");
  summary.set_usage(ScriptedReply::NONE);  // the whole reservation stays
  *script.add_replies() = summary;
  ASSERT_NO_FATAL_FAILURE(StartServer(script));
  ASSERT_NO_FATAL_FAILURE(StartSession(400000));
  Turn("hi");
  const int64_t before = Budget().spent();
  garuda::testing::ScriptedLines lines({"/compact", "/exit"});
  ASSERT_TRUE(RunLines(*session_, lines, &cancel_).ok());
  const std::vector<RecordedRequest> requests = server_->requests();
  ASSERT_EQ(requests.size(), 2u);
  const RecordedRequest& request = requests[1];
  EXPECT_EQ(MaxTokensOf(request), 4096);
  // max(previous context 100, the whole summary input) + 4096.
  const int64_t expected =
      std::max<int64_t>(100, budget::TokensForChars(request.body().size())) +
      4096;
  EXPECT_EQ(Budget().spent() - before, expected);
  ASSERT_EQ(session_->messages().size(), 1u);
  EXPECT_TRUE(absl::StrContains(session_->messages()[0].text(), "SUMMARY:"));
  // --resume reads the summary, not what it replaced.
  auto resumed = ReadConversation(
      JoinPath(home_, ".garuda/sessions/children-session/journal.jsonl"));
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  ASSERT_EQ(resumed->size(), 1u);
  EXPECT_TRUE(absl::StrContains((*resumed)[0].text(), "SUMMARY:"));
}

TEST_P(ChildrenTest, APromptPastTheContextWindowIsCompactedFirst) {
  ProviderScript script;
  *script.add_replies() = ReadNotes("r1", 100, 20);
  *script.add_replies() = Text("SUMMARY: notes were read.");
  *script.add_replies() = Text("Continuing from the summary.");
  ASSERT_NO_FATAL_FAILURE(StartServer(script));
  garuda::testing::Write(project_.root + "/notes.txt",
                         std::string(40000, 'n') + "\n");
  ChildSettings agents;
  agents.context_window = 12000;  // the first request fits, the second not
  ASSERT_NO_FATAL_FAILURE(StartSession(400000, agents));
  TurnOutcome outcome = Turn("Read the notes");
  EXPECT_EQ(outcome.answer, "Continuing from the summary.");
  const std::vector<RecordedRequest> requests = server_->requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_FALSE(absl::StrContains(requests[0].body(), "compacted"));
  EXPECT_TRUE(absl::StrContains(requests[1].body(), "about to be compacted"));
  EXPECT_TRUE(
      absl::StrContains(requests[2].body(), "SUMMARY: notes were read."));
  EXPECT_FALSE(absl::StrContains(requests[2].body(), std::string(1000, 'n')));
}

INSTANTIATE_TEST_SUITE_P(BothProviders, ChildrenTest,
                         ::testing::Values(ServerKind::kOpenAi,
                                           ServerKind::kAnthropic),
                         [](const ::testing::TestParamInfo<ServerKind>& info) {
                           return std::string(
                               provider::testing::KindName(info.param));
                         });

}  // namespace
}  // namespace agent
}  // namespace garuda
