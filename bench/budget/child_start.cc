#include "bench/budget/child_start.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/agent/session.h"
#include "lib/budget/client.h"
#include "lib/budget/limits.h"
#include "lib/ipc/helper_process.h"
#include "lib/permissions/permissions.h"
#include "lib/provider/client.h"
#include "lib/tools/project.h"
#include "tests/providers/scripted_server.h"

namespace garuda {
namespace budget {
namespace {

using Clock = std::chrono::steady_clock;

// Nobody to show anything to, nobody to ask.
class Silent : public agent::Interaction {
 public:
  bool CanAsk() const override { return false; }
  void ShowText(absl::string_view) override {}
  void ShowRetry(absl::string_view) override {}
  void ShowToolCall(const agent::ToolCallView&) override {}
  void ShowToolOutcome(const agent::ToolOutcomeView&) override {}
  void ShowNotice(absl::string_view) override {}
  agent::PermissionAnswer AskPermission(
      const agent::PermissionQuestion&) override {
    return agent::PermissionAnswer::kNo;
  }
  Answer AskChangeSet(const ChangeSet&, const Rendered&) override {
    return Answer::kDiscard;
  }
};

class NoAudit : public AuditSink {
 public:
  absl::Status Record(const audit::AuditEvent&) override {
    return absl::OkStatus();
  }
  absl::Status Close() override { return absl::OkStatus(); }
};

provider::ScriptedReply Answer(const std::string& text) {
  provider::ScriptedReply reply;
  reply.set_text(text);
  reply.set_text_pieces(1);
  reply.set_input_tokens(100);
  reply.set_output_tokens(10);
  return reply;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

absl::StatusOr<std::vector<ChildStartFigures>> MeasureChildStarts(
    const std::string& budgeter_path, const std::string& project_root,
    const std::vector<int>& child_counts, int rounds) {
  // The script: `rounds` one-request turns, then per count `rounds` turns
  // of one response with that many task calls, each child's one answer,
  // and the final answer.
  provider::ProviderScript script;
  for (int r = 0; r < rounds; ++r) *script.add_replies() = Answer("single");
  for (int count : child_counts) {
    for (int r = 0; r < rounds; ++r) {
      provider::ScriptedReply tasks = Answer("split");
      for (int c = 0; c < count; ++c) {
        provider::ScriptedToolCall* call = tasks.add_tool_calls();
        call->set_id(absl::StrCat("t", c));
        call->set_name("task");
        call->set_arguments_json(
            R"({"description":"bench","prompt":"answer at once"})");
        call->set_argument_pieces(1);
      }
      *script.add_replies() = tasks;
      for (int c = 0; c < count; ++c) {
        provider::ScriptedReply child = Answer("child answer");
        child.add_when_body_contains("You are a child agent");
        *script.add_replies() = child;
      }
      *script.add_replies() = Answer("final");
    }
  }
  auto server = provider::testing::ScriptedServer::Start(
      provider::testing::ServerKind::kOpenAi, script);
  if (!server.ok()) return server.status();

  ipc::HelperOptions options;
  options.argv = {budgeter_path, "serve", "--channel-fd=3",
                  "--session=bench-children",
                  absl::StrCat("--limit=", kMaxTokens)};
  options.channel = BudgeterChannelOptions();
  auto budgeter = ipc::HelperProcess::Spawn(options);
  if (!budgeter.ok()) return budgeter.status();
  BudgetClient budget(budgeter->get());

  auto project = Project::Open(project_root);
  if (!project.ok()) return project.status();
  provider::ClientOptions client_options;
  client_options.provider = "openai";
  client_options.model = "bench";
  client_options.base_url = (*server)->base_url();
  client_options.max_tokens = 1000;
  auto model = provider::ModelClient::Create(client_options);
  if (!model.ok()) return model.status();

  Silent person;
  NoAudit audit;
  Permissions permissions;
  agent::SessionConfig config;
  config.session_id = "bench-children";
  config.description.set_mode("direct");
  config.description.set_sandboxed(true);
  config.agents.max_parallel = 16;
  agent::SessionParts parts;
  parts.interaction = &person;
  parts.project = project->get();
  parts.permissions = &permissions;
  parts.audit = &audit;
  parts.budget = &budget;
  parts.model = model->get();
  auto session = agent::Session::Start(std::move(config), parts);
  if (!session.ok()) return session.status();

  CancelFlag cancel;
  auto turn = [&](std::vector<double>* samples) -> absl::Status {
    Clock::time_point start = Clock::now();
    absl::StatusOr<agent::TurnOutcome> outcome =
        (*session)->RunTurn("go", &cancel);
    if (!outcome.ok()) return outcome.status();
    if (!outcome->stopped.empty()) {
      return absl::InternalError(outcome->stopped);
    }
    samples->push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - start)
            .count());
    // Every turn from an empty conversation, so each is the same size.
    auto cleared = (*session)->HandleLine("/clear", &cancel);
    return cleared.status();
  };

  std::vector<double> single;
  for (int r = 0; r < rounds; ++r) {
    if (absl::Status s = turn(&single); !s.ok()) return s;
  }
  const double request_us = Median(single);
  std::vector<ChildStartFigures> out;
  ChildStartFigures one;
  one.children = 0;
  one.turn_us = request_us;
  one.requests = 1;
  out.push_back(one);
  for (int count : child_counts) {
    std::vector<double> samples;
    for (int r = 0; r < rounds; ++r) {
      if (absl::Status s = turn(&samples); !s.ok()) return s;
    }
    ChildStartFigures figures;
    figures.children = count;
    figures.requests = count + 2;
    figures.turn_us = Median(samples);
    figures.per_child_us =
        (figures.turn_us - figures.requests * request_us) / count;
    out.push_back(figures);
  }
  session->reset();
  if (absl::Status stopped = (*budgeter)->Stop(); !stopped.ok()) {
    return stopped;
  }
  return out;
}

}  // namespace budget
}  // namespace garuda
