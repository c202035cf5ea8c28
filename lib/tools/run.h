// What a read tool's handler calls: the permission request of a built-in
// tool's call, and the result of a read tool as the model receives it.
#ifndef GARUDA_LIB_TOOLS_RUN_H_
#define GARUDA_LIB_TOOLS_RUN_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/permissions/permissions.h"
#include "lib/tools/builtin_tools.h"
#include "lib/tools/definitions.h"
#include "lib/tools/project.h"

namespace garuda {

struct ToolOutput {
  std::string content;  // capped at kToolResultLimit, with the cut line
  bool is_error = false;
};

// ToolTable::PermissionRequestFor over the built-in tools.
absl::StatusOr<PermissionRequest> PermissionRequestFor(
    const Project& project, absl::string_view tool,
    absl::string_view arguments_json, ToolProfile profile);

// A read tool's call whose input passed its check: run, formatted and
// capped. Any failure becomes an error result whose text tells the model
// what to fix. With
// `permissions`, a listing or a search leaves out each file that a deny
// rule of the same rule name covers, so searching a folder above a denied
// one does not show it (the call itself is decided before, by the caller).
ToolOutput RunReadTool(Project& project, const ReadToolSpec& tool,
                       const google::protobuf::Value& input,
                       const Permissions* permissions = nullptr);

// The input check, then RunReadTool, for a built-in read tool by its name;
// an error result for any other name.
ToolOutput RunReadOnlyTool(Project& project, absl::string_view tool,
                           absl::string_view arguments_json,
                           const Permissions* permissions = nullptr);

// An error for the model, capped like any result.
ToolOutput ErrorOutput(const absl::Status& status);

}  // namespace garuda

#endif  // GARUDA_LIB_TOOLS_RUN_H_
