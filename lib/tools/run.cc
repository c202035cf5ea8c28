#include "lib/tools/run.h"

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/provider/json.h"
#include "lib/tools/read_tools.h"
#include "lib/tools/result.h"

namespace garuda {

bool IsReadOnlyTool(absl::string_view tool) {
  return tool == "read_file" || tool == "list_files" || tool == "grep";
}

absl::StatusOr<PermissionRequest> PermissionRequestFor(
    const Project& project, absl::string_view tool,
    absl::string_view arguments_json, ToolProfile profile) {
  PermissionRequest request;
  request.tool = std::string(tool);
  if (tool == "bash") {
    ASSIGN_OR_RETURN(BashInput input, ParseBashInput(arguments_json, profile));
    request.argument = input.command;
    return request;
  }
  std::string path;
  if (tool == "read_file") {
    ASSIGN_OR_RETURN(ReadFileInput input, ParseReadFileInput(arguments_json));
    path = input.path;
  } else if (tool == "list_files") {
    ASSIGN_OR_RETURN(ListFilesInput input, ParseListFilesInput(arguments_json));
    path = input.path;
  } else if (tool == "grep") {
    ASSIGN_OR_RETURN(GrepInput input, ParseGrepInput(arguments_json));
    path = input.path;
  } else if (tool == "edit_file") {
    ASSIGN_OR_RETURN(EditFileInput input, ParseEditFileInput(arguments_json));
    path = input.path;
  } else if (tool == "write_file") {
    ASSIGN_OR_RETURN(WriteFileInput input, ParseWriteFileInput(arguments_json));
    path = input.path;
  } else if (IsCodeTool(tool)) {
    ASSIGN_OR_RETURN(google::protobuf::Value input,
                     CheckToolInput(tool, arguments_json, profile));
    path = provider::StringMember(input, "path");
    // By name: the rules see the name; the files the answer comes from are
    // filtered by the read rules afterwards (RunCodeTool).
    if (path.empty()) {
      request.argument = provider::StringMember(input, "symbol");
      return request;
    }
  } else {
    return ToolSchema(tool, profile).status();  // names the tools there are
  }
  if (IsReadOnlyTool(tool) || IsCodeTool(tool)) {
    ASSIGN_OR_RETURN(OpenedPath opened, project.OpenForRead(path));
    request.argument = opened.relative;
  } else {
    ASSIGN_OR_RETURN(request.argument, project.Relative(path));
  }
  return request;
}

ToolOutput ErrorOutput(const absl::Status& status) {
  return ToolOutput{CapToolResult(absl::StrCat("Error: ", status.message())),
                    true};
}

ToolOutput RunReadOnlyTool(Project& project, absl::string_view tool,
                           absl::string_view arguments_json,
                           const Permissions* permissions) {
  HiddenPredicate hidden;
  if (permissions != nullptr) {
    hidden = [permissions, tool](const std::string& relative) {
      return permissions->Decide({std::string(tool), relative}).verdict ==
             Verdict::kDeny;
    };
  }
  absl::StatusOr<std::string> text;
  if (tool == "read_file") {
    absl::StatusOr<ReadFileInput> input = ParseReadFileInput(arguments_json);
    text = input.ok() ? ReadFileTool(project, *input) : input.status();
  } else if (tool == "list_files") {
    absl::StatusOr<ListFilesInput> input = ParseListFilesInput(arguments_json);
    text = input.ok() ? ListFilesTool(project, *input, hidden) : input.status();
  } else if (tool == "grep") {
    absl::StatusOr<GrepInput> input = ParseGrepInput(arguments_json);
    text = input.ok() ? GrepTool(project, *input, hidden) : input.status();
  } else {
    text = absl::InvalidArgumentError(
        absl::StrCat(tool, " is not a read-only tool"));
  }
  if (!text.ok()) return ErrorOutput(text.status());
  return ToolOutput{CapToolResult(*text), false};
}

}  // namespace garuda
