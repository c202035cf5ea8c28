#include "lib/agent/answer_calls.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/agent/usage_meter.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace agent {
namespace {

// A tool result as the report shows it: the head of what the model got.
constexpr size_t kReportOutputBytes = 16 * 1024;
std::string ReportOutput(const std::string& content) {
  if (content.size() <= kReportOutputBytes) return content;
  return absl::StrCat(content.substr(0, kReportOutputBytes), "\n[",
                      content.size() - kReportOutputBytes,
                      " more bytes not shown]");
}

provider::ToolResult NotRun(const provider::ToolCall& call) {
  provider::ToolResult result;
  result.set_tool_call_id(call.id());
  result.set_content("Not run: the person cancelled.");
  result.set_is_error(true);
  return result;
}

}  // namespace

bool AnswerCalls::Cancelled() const {
  return tools_.cancel != nullptr && tools_.cancel->cancelled();
}

void AnswerCalls::Report(ToolCallDone& done) const {
  // A child's report shows its answer; its result also tells the model
  // what budget is left (session_children.cc).
  done.report.set_output(ReportOutput(
      done.report.has_child() ? done.report.output() : done.result.content()));
  if (events_ != nullptr) events_->ToolResult(done.report);
}

absl::StatusOr<bool> AnswerCalls::Run(const provider::ModelResponse& response,
                                      TurnOutcome* outcome) {
  provider::ChatMessage results;
  results.set_role("user");
  bool cancelled = false;
  const int calls = response.tool_calls_size();
  std::vector<std::optional<provider::ToolResult>> ordered(calls);
  std::vector<std::optional<ToolCallReport>> reports(calls);
  std::vector<provider::ToolCall> tasks;
  std::vector<int> task_index;
  for (int i = 0; i < calls; ++i) {
    const provider::ToolCall& call = response.tool_calls(i);
    if (cancelled || Cancelled()) {
      cancelled = true;
      ordered[i] = NotRun(call);
      continue;
    }
    if (events_ != nullptr) events_->ToolCall(call);
    const ToolRow* row = tools_.tools->Find(call.name());
    if (row != nullptr && row->batched) {
      tasks.push_back(call);
      task_index.push_back(i);
      continue;
    }
    absl::StatusOr<ToolCallDone> ran;
    {
      // One agent at a time at the helpers and the questions.
      absl::MutexLock lock(lock_);
      ran = RunToolCall(tools_, call);
    }
    if (!ran.ok()) return ran.status();
    ToolCallDone& done = *ran;
    Report(done);
    *results.add_tool_results() = done.result;
    ordered[i] = done.result;
    reports[i] = done.report;
    RETURN_IF_ERROR(stops_.CheckHelpers());
  }
  if (!tasks.empty()) {
    std::vector<TaskDone> children;
    if (cancelled || Cancelled()) {
      cancelled = true;
    } else {
      ASSIGN_OR_RETURN(children, run_tasks_(tasks, results, tools_.cancel));
    }
    for (size_t t = 0; t < tasks.size(); ++t) {
      const int i = task_index[t];
      if (t >= children.size()) {
        ordered[i] = NotRun(tasks[t]);
        continue;
      }
      TaskDone& child = children[t];
      Report(child.done);
      AddUsage(child.usage, &outcome->children_usage);
      ordered[i] = child.done.result;
      reports[i] = child.done.report;
    }
    RETURN_IF_ERROR(stops_.CheckHelpers());
    if (Cancelled()) cancelled = true;
  }
  results.clear_tool_results();
  for (int i = 0; i < calls; ++i) {
    *results.add_tool_results() = *ordered[i];
    if (reports[i]) outcome->tool_calls.push_back(*reports[i]);
  }
  // A Ctrl-C during the last call (it stopped a command) ends the turn too.
  if (Cancelled()) cancelled = true;
  RETURN_IF_ERROR(conversation_.Add(std::move(results)));
  return cancelled;
}

}  // namespace agent
}  // namespace garuda
