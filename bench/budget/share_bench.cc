// How much of one budget parallel child agents can use (issue 28): a real
// session (lib/agent) against the scripted OpenAI server on loopback and the
// real garuda-budgeter, a parent that hands its work to 1, 3 or 8 children in
// one response, each child reading a file step after step (work that needs
// more than the cap), at caps of 30 000, 60 000 and 200 000 tokens. Each
// request reports the input the client estimated (the body's bytes / 4) and
// 60 % of its output limit. Every row is run with today's exact floor and
// with the worst-case floor it replaced, in the same run.
//
//   bazel run -c opt //bench/budget:share_bench
//   bazel run -c opt //bench/budget:share_bench -- --caps=60000 --children=3
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/budget/quiet_session.h"
#include "lib/agent/session.h"
#include "lib/base/files.h"
#include "lib/budget/client.h"
#include "lib/ipc/helper_process.h"
#include "lib/permissions/permissions.h"
#include "lib/provider/client.h"
#include "lib/tools/project.h"
#include "tests/providers/scripted_server.h"

namespace garuda {
namespace budget {
namespace {

constexpr uint32_t kMaxTokens = 1000;  // model.maxTokens
constexpr int64_t kStepOutput = kMaxTokens * 6 / 10;
constexpr int kStepsPerChild = 60;  // more than any cap pays for
// A child's answer when it wraps up: longer than the small caps keep.
const std::string kFindings =
    "Findings: " + std::string(6000, 'f') + " \"quoted\"\n";

provider::ScriptedReply Reply(const std::string& text, int64_t output) {
  provider::ScriptedReply reply;
  reply.set_text(text);
  reply.set_text_pieces(1);
  reply.set_input_from_body(true);
  reply.set_output_tokens(output);
  return reply;
}

std::string Marker(int child) { return absl::StrCat("share-work-", child); }

provider::ProviderScript Script(int children) {
  provider::ProviderScript script;
  provider::ScriptedReply tasks = Reply("Splitting the work.", 200);
  for (int c = 0; c < children; ++c) {
    provider::ScriptedToolCall* call = tasks.add_tool_calls();
    call->set_id(absl::StrCat("task_", c));
    call->set_name("task");
    call->set_arguments_json(absl::StrCat(
        R"({"description":"part )", c, R"(","prompt":"Read notes.txt again )",
        R"(and again, then report. )", Marker(c), R"("})"));
    call->set_argument_pieces(1);
  }
  *script.add_replies() = tasks;
  for (int c = 0; c < children; ++c) {
    // At most the least output a wrap-up may be lowered to.
    provider::ScriptedReply wrap_up = Reply(kFindings, 100);
    wrap_up.add_when_body_contains("You are a child agent");
    wrap_up.add_when_body_contains(Marker(c));
    wrap_up.add_when_body_contains("your findings so far");
    *script.add_replies() = wrap_up;
    for (int i = 0; i < kStepsPerChild; ++i) {
      provider::ScriptedReply step = Reply("", kStepOutput);
      provider::ScriptedToolCall* call = step.add_tool_calls();
      call->set_id(absl::StrCat("read_", i));
      call->set_name("read_file");
      call->set_arguments_json(R"({"path":"notes.txt"})");
      call->set_argument_pieces(1);
      step.add_when_body_contains("You are a child agent");
      step.add_when_body_contains(Marker(c));
      *script.add_replies() = step;
    }
  }
  *script.add_replies() = Reply("The parent's final answer.", 200);
  return script;
}

struct Row {
  bool worst_case = false;
  int children = 0;
  int64_t cap = 0;
  int64_t spent = 0;
  int refused = 0;
  uint32_t min_requests = 0;
  double mean_requests = 0;
  bool final_fits = false;
  std::string detail;  // one line per child (--detail)
};

absl::StatusOr<Row> Run(const std::string& budgeter_path,
                        const std::string& root, int64_t cap, int children,
                        bool worst_case, int run) {
  auto server = provider::testing::ScriptedServer::Start(
      provider::testing::ServerKind::kOpenAi, Script(children));
  if (!server.ok()) return server.status();
  QuietSessionOptions options;
  options.budgeter_path = budgeter_path;
  options.session_id = absl::StrCat("share-", run);
  options.limit = cap;
  options.project_root = root;
  options.base_url = (*server)->base_url();
  options.max_tokens = kMaxTokens;
  options.min_output_tokens = 100;
  options.agents.max_parallel = 8;
  options.agents.worst_case_floor = worst_case;
  auto quiet = QuietSession::Start(options);
  if (!quiet.ok()) return quiet.status();
  CancelFlag cancel;
  absl::StatusOr<agent::TurnOutcome> outcome =
      (*quiet)->session().RunTurn("Split the reading into parts.", &cancel);
  if (!outcome.ok()) return outcome.status();
  auto status = (*quiet)->budget().Status();
  if (!status.ok()) return status.status();

  Row row;
  row.worst_case = worst_case;
  row.children = children;
  row.cap = cap;
  row.spent = status->spent();
  row.final_fits = outcome->end == agent::TurnEnd::kAnswered &&
                   outcome->answer == "The parent's final answer.";
  row.min_requests = UINT32_MAX;
  uint32_t total = 0;
  for (const agent::ToolCallReport& call : outcome->tool_calls) {
    if (absl::StartsWith(call.child().outcome(), "refused")) ++row.refused;
    const uint32_t requests = call.child().usage().requests();
    absl::StrAppend(&row.detail, "    ", call.child().agent_id(), ": lease ",
                    call.child().lease_tokens(), ", charged ",
                    call.child().usage().charged_tokens(), ", requests ",
                    requests, ", ", call.child().outcome(), "\n");
    row.min_requests = std::min(row.min_requests, requests);
    total += requests;
  }
  if (outcome->tool_calls.empty()) row.min_requests = 0;
  row.mean_requests = children > 0 ? static_cast<double>(total) / children : 0;
  if (absl::Status stopped = (*quiet)->Stop(); !stopped.ok()) {
    return stopped;
  }
  return row;
}

absl::StatusOr<std::vector<int64_t>> Numbers(absl::string_view list) {
  std::vector<int64_t> out;
  for (absl::string_view part : absl::StrSplit(list, ',')) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(part, &value) || value < 1) {
      return absl::InvalidArgumentError(absl::StrCat("not a count: ", part));
    }
    out.push_back(value);
  }
  return out;
}

int Main(int argc, char** argv) {
  std::string budgeter = "cmd/garuda-budgeter/garuda-budgeter";
  std::vector<int64_t> caps = {30000, 60000, 200000};
  std::vector<int64_t> child_counts = {1, 3, 8};
  bool detail = false;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    absl::StatusOr<std::vector<int64_t>> list;
    if (absl::ConsumePrefix(&arg, "--budgeter=")) {
      budgeter = std::string(arg);
      continue;
    } else if (arg == "--detail") {
      detail = true;
      continue;
    } else if (absl::ConsumePrefix(&arg, "--caps=")) {
      list = Numbers(arg);
      if (list.ok()) caps = *list;
    } else if (absl::ConsumePrefix(&arg, "--children=")) {
      list = Numbers(arg);
      if (list.ok()) child_counts = *list;
    } else {
      list = absl::InvalidArgumentError(std::string(arg));
    }
    if (!list.ok()) {
      std::fprintf(
          stderr,
          "share_bench: %s\nusage: share_bench [--budgeter=PATH] "
          "[--caps=30000,60000,200000] [--children=1,3,8] [--detail]\n",
          std::string(list.status().message()).c_str());
      return 2;
    }
  }
  std::string home = "/tmp/share-bench-XXXXXX";
  if (::mkdtemp(home.data()) == nullptr) return 1;
  ::setenv("HOME", home.c_str(), 1);
  const std::string root = JoinPath(home, "project");
  if (!MakeDirectories(root, 0700).ok() ||
      !WriteFileAtomically(JoinPath(root, "notes.txt"),
                           std::string(3000, 'n') + "\n", 0600)
           .ok()) {
    return 1;
  }

  std::printf(
      "one budget, parallel children (model.maxTokens %u, each step "
      "reports its estimated input and %lld output tokens)\n",
      kMaxTokens, static_cast<long long>(kStepOutput));
  std::printf("%-11s %8s %8s %8s %9s %7s %8s %13s %11s\n", "floor", "children",
              "cap", "spent", "overshoot", "spent%", "refused",
              "requests/child", "final fits");
  int exit_code = 0;
  int run = 0;
  for (int64_t cap : caps) {
    for (int64_t children : child_counts) {
      for (bool worst_case : {false, true}) {
        absl::StatusOr<Row> row = Run(
            budgeter, root, cap, static_cast<int>(children), worst_case, ++run);
        if (!row.ok()) {
          std::fprintf(stderr, "cap %lld, %lld children: %s\n",
                       static_cast<long long>(cap),
                       static_cast<long long>(children),
                       std::string(row.status().message()).c_str());
          exit_code = 1;
          continue;
        }
        std::printf(
            "%-11s %8d %8lld %8lld %9lld %6.1f%% %8d %6u / %-6.1f %11s\n",
            row->worst_case ? "worst-case" : "exact", row->children,
            static_cast<long long>(row->cap),
            static_cast<long long>(row->spent),
            static_cast<long long>(std::max<int64_t>(0, row->spent - cap)),
            100.0 * static_cast<double>(row->spent) / static_cast<double>(cap),
            row->refused, row->min_requests, row->mean_requests,
            row->final_fits ? "yes" : "NO");
        if (detail) std::printf("%s", row->detail.c_str());
      }
    }
  }
  std::printf(
      "requests/child: the fewest / the mean. Goals (exact floor): overshoot "
      "0, spent >= 60%%, every child >= 2 requests, the final answer fits.\n");
  std::string cleanup = absl::StrCat("rm -rf '", home, "'");
  (void)!std::system(cleanup.c_str());
  return exit_code;
}

}  // namespace
}  // namespace budget
}  // namespace garuda

int main(int argc, char** argv) { return garuda::budget::Main(argc, argv); }
