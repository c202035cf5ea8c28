#include "bench/budget/child_start.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/budget/quiet_session.h"
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

  QuietSessionOptions options;
  options.budgeter_path = budgeter_path;
  options.session_id = "bench-children";
  options.limit = kMaxTokens;
  options.project_root = project_root;
  options.base_url = (*server)->base_url();
  options.max_tokens = 1000;
  options.agents.max_parallel = 16;
  auto quiet = QuietSession::Start(options);
  if (!quiet.ok()) return quiet.status();
  agent::Session* session = &(*quiet)->session();

  CancelFlag cancel;
  auto turn = [&](std::vector<double>* samples) -> absl::Status {
    Clock::time_point start = Clock::now();
    absl::StatusOr<agent::TurnOutcome> outcome =
        session->RunTurn("go", &cancel);
    if (!outcome.ok()) return outcome.status();
    if (!outcome->stopped.empty()) {
      return absl::InternalError(outcome->stopped);
    }
    samples->push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - start)
            .count());
    // Every turn from an empty conversation, so each is the same size.
    auto cleared = session->HandleLine("/clear", &cancel);
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
  if (absl::Status stopped = (*quiet)->Stop(); !stopped.ok()) {
    return stopped;
  }
  return out;
}

}  // namespace budget
}  // namespace garuda
