#include "lib/tools/code_tools.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/knowledge/render.h"
#include "lib/provider/json.h"
#include "lib/tools/definitions.h"
#include "lib/tools/result.h"

namespace garuda {

absl::StatusOr<CodeToolInput> ParseCodeToolInput(absl::string_view tool,
                                                 absl::string_view json) {
  ASSIGN_OR_RETURN(google::protobuf::Value input,
                   CheckToolInput(tool, json, ToolProfile::kDefault));
  CodeToolInput out;
  out.tool = std::string(tool);
  out.path = provider::StringMember(input, "path");
  out.symbol = provider::StringMember(input, "symbol");
  auto integer = [&input](absl::string_view name) -> int64_t {
    const google::protobuf::Value* value = provider::Member(input, name);
    return value == nullptr ? 0 : static_cast<int64_t>(value->number_value());
  };
  out.line = integer("line");
  out.column = integer("column");
  out.depth = integer("depth");
  const bool position = !out.path.empty() || out.line > 0 || out.column > 0;
  if (!out.symbol.empty() && position) {
    return absl::InvalidArgumentError(absl::StrCat(
        tool,
        ": give either \"symbol\" or \"path\", \"line\" and \"column\", "
        "not both"));
  }
  if (out.symbol.empty() &&
      (out.path.empty() || out.line < 1 || out.column < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        tool,
        ": give \"path\", \"line\" and \"column\" of the name (all "
        "three), or \"symbol\" with its name"));
  }
  if (out.line > (1 << 30) || out.column > (1 << 30) || out.depth > 10) {
    return absl::InvalidArgumentError(
        absl::StrCat(tool,
                     ": \"line\" and \"column\" must be real positions and "
                     "\"depth\" at most 10"));
  }
  return out;
}

namespace {

std::string FirstLine(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

}  // namespace

CodeToolOutcome RunCodeTool(const Project& project,
                            knowledge::CodeService& service,
                            const CodeToolInput& input,
                            const HiddenPredicate& hidden) {
  CodeToolOutcome outcome;
  code_tools::Query query;
  query.set_operation(input.tool);
  if (input.symbol.empty()) {
    absl::StatusOr<OpenedPath> opened = project.OpenForRead(input.path);
    if (!opened.ok()) {
      outcome.output = ErrorOutput(opened.status());
      outcome.screen = "failed";
      return outcome;
    }
    query.set_path(opened->relative);
    query.set_line(static_cast<int32_t>(input.line));
    query.set_column(static_cast<int32_t>(input.column));
  } else {
    query.set_symbol(input.symbol);
  }
  query.set_depth(static_cast<int32_t>(input.depth));
  // One more than is shown, so that a cut is known.
  query.set_max_results(kCodeToolMaxResults + 1);
  absl::StatusOr<knowledge::QueryResult> answer = service.Ask(query);
  if (!answer.ok()) {
    outcome.output = ErrorOutput(answer.status());
    outcome.screen = "failed";
    return outcome;
  }
  knowledge::QueryResult& result = *answer;
  if (hidden) {
    std::vector<knowledge::Hit> kept;
    size_t left_out = 0;
    for (knowledge::Hit& hit : result.results) {
      if (hidden(hit.path)) {
        ++left_out;
      } else {
        kept.push_back(std::move(hit));
      }
    }
    result.results = std::move(kept);
    if (left_out > 0) {
      result.approximate = true;
      result.notes.push_back(absl::StrCat(
          left_out,
          " result(s) in files the settings deny reading were left "
          "out"));
    }
  }
  if (static_cast<int>(result.results.size()) > kCodeToolMaxResults) {
    result.results.resize(kCodeToolMaxResults);
    result.truncated = true;
  }
  // A cut answer is never complete, whatever its hits say.
  if (result.truncated || result.results.empty()) result.approximate = true;
  outcome.output =
      ToolOutput{CapToolResult(knowledge::ModelText(result)), false};
  outcome.screen = FirstLine(knowledge::ChatText(result));
  return outcome;
}

}  // namespace garuda
