#include "lib/agent/builtin_rows.h"

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/agent/apply_call.h"
#include "lib/agent/children.h"
#include "lib/agent/command_tool.h"
#include "lib/agent/tool_run.h"
#include "lib/base/status_macros.h"
#include "lib/tools/builtin_tools.h"
#include "lib/tools/code_tools.h"
#include "lib/tools/run.h"

namespace garuda {
namespace agent {
namespace {

absl::StatusOr<std::optional<std::string>> DecideRead(ToolRun& run) {
  return run.Decide(false, absl::StrCat("Read: ", run.summary()), "");
}

absl::StatusOr<ToolCallDone> RunReadCall(ToolRun& run,
                                         const ReadToolSpec& tool) {
  ASSIGN_OR_RETURN(std::optional<std::string> decision, DecideRead(run));
  if (!decision) return run.TakeDone();
  const ToolContext& c = run.context();
  ToolOutput output = RunReadTool(*c.project, tool, run.input(), c.permissions);
  std::string outcome =
      output.is_error ? "failed"
                      : absl::StrCat(output.content.size(), " characters");
  return run.Finish(*decision, std::move(output), outcome);
}

// The code tools read like read_file and are decided as it is; their
// answer leaves out files a read rule denies.
absl::StatusOr<ToolCallDone> RunCodeCall(ToolRun& run) {
  ASSIGN_OR_RETURN(std::optional<std::string> decision, DecideRead(run));
  if (!decision) return run.TakeDone();
  const ToolContext& c = run.context();
  absl::StatusOr<CodeToolInput> input =
      ParseCodeToolInput(run.call().name(), run.call().arguments_json());
  if (!input.ok()) {
    return run.Finish(*decision, ErrorOutput(input.status()),
                      absl::StrCat("the call's input was refused: ",
                                   input.status().message()));
  }
  if (c.code == nullptr) {
    return run.Finish(*decision,
                      ErrorOutput(absl::FailedPreconditionError(
                          "the code tools are not available in this session")),
                      "not available");
  }
  const Permissions* permissions = c.permissions;
  std::string rule = run.request().tool;
  HiddenPredicate hidden = [permissions, rule](const std::string& path) {
    return permissions->Decide({kReadFileRule, path}).verdict ==
               Verdict::kDeny ||
           permissions->Decide({rule, path}).verdict == Verdict::kDeny;
  };
  CodeToolOutcome answered = RunCodeTool(*c.project, *c.code, *input, hidden);
  return run.Finish(*decision, std::move(answered.output), answered.screen);
}

}  // namespace

absl::Status RegisterBuiltinTools(ToolTable& table, BuiltinOffers offers) {
  const BuiltinTools& tools = Builtins();
  RETURN_IF_ERROR(table.Register({tools.command, RunCommandCall}));
  for (const ReadToolSpec& tool : tools.reads) {
    RETURN_IF_ERROR(table.Register(
        {tool.spec, [&tool](ToolRun& run) { return RunReadCall(run, tool); }}));
  }
  for (const EditToolSpec& tool : tools.edits) {
    RETURN_IF_ERROR(table.Register(
        {tool.spec, [&tool](ToolRun& run) { return RunEditCall(run, tool); }}));
  }
  for (const ToolSpec& spec : tools.code) {
    ToolRow row{spec, RunCodeCall};
    row.offered = offers.code_tools;
    RETURN_IF_ERROR(table.Register(std::move(row)));
  }
  ToolRow task = TaskRow();
  task.offered = offers.task;
  return table.Register(std::move(task));
}

ToolTable BuiltinToolTable(BuiltinOffers offers) {
  ToolTable table;
  absl::Status registered = RegisterBuiltinTools(table, std::move(offers));
  if (!registered.ok()) {
    std::fprintf(stderr, "garuda-agent: the built-in tools: %s\n",
                 std::string(registered.message()).c_str());
    std::abort();
  }
  return table;
}

}  // namespace agent
}  // namespace garuda
