#include "lib/tools/run.h"

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/tools/result.h"

namespace garuda {

absl::StatusOr<PermissionRequest> PermissionRequestFor(
    const Project& project, absl::string_view tool,
    absl::string_view arguments_json, ToolProfile profile) {
  return BuiltinSpecs().PermissionRequestFor(project, tool, arguments_json,
                                             profile);
}

ToolOutput ErrorOutput(const absl::Status& status) {
  return ToolOutput{CapToolResult(absl::StrCat("Error: ", status.message())),
                    true};
}

ToolOutput RunReadTool(Project& project, const ReadToolSpec& tool,
                       const google::protobuf::Value& input,
                       const Permissions* permissions) {
  HiddenPredicate hidden;
  if (permissions != nullptr) {
    hidden = [permissions,
              rule = tool.spec.permission.rule](const std::string& relative) {
      return permissions->Decide({rule, relative}).verdict == Verdict::kDeny;
    };
  }
  absl::StatusOr<std::string> text = tool.run(project, input, hidden);
  if (!text.ok()) return ErrorOutput(text.status());
  return ToolOutput{CapToolResult(*text), false};
}

ToolOutput RunReadOnlyTool(Project& project, absl::string_view tool,
                           absl::string_view arguments_json,
                           const Permissions* permissions) {
  for (const ReadToolSpec& read : Builtins().reads) {
    if (read.spec.name != tool) continue;
    absl::StatusOr<google::protobuf::Value> input =
        BuiltinSpecs().CheckInput(tool, arguments_json, ToolProfile::kDefault);
    if (!input.ok()) return ErrorOutput(input.status());
    return RunReadTool(project, read, *input, permissions);
  }
  return ErrorOutput(absl::InvalidArgumentError(
      absl::StrCat(tool, " is not a read-only tool")));
}

}  // namespace garuda
