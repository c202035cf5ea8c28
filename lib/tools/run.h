// What the session loop calls for a tool call: the permission request to
// decide on, and the result of a read-only tool as the model receives it.
#ifndef GARUDA_LIB_TOOLS_RUN_H_
#define GARUDA_LIB_TOOLS_RUN_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/permissions/permissions.h"
#include "lib/tools/definitions.h"
#include "lib/tools/project.h"

namespace garuda {

struct ToolOutput {
  std::string content;  // capped at kToolResultLimit, with the cut line
  bool is_error = false;
};

// The request lib/permissions decides on: the command for bash; for the
// read tools the path where the kernel arrives (a link inside the project
// is matched as its target); for the edit tools the normalized path. An
// input that fails its check, or a path outside the project, is an error
// for the model (no question is asked about it).
absl::StatusOr<PermissionRequest> PermissionRequestFor(
    const Project& project, absl::string_view tool,
    absl::string_view arguments_json, ToolProfile profile);

bool IsReadOnlyTool(absl::string_view tool);

// read_file, list_files or grep: checked, run, formatted and capped. Any
// failure becomes an error result whose text tells the model what to fix.
// With `permissions`, list_files and grep leave out each file that a deny
// rule of the same tool covers, so searching a folder above a denied one
// does not show it (the call itself is decided before, by the caller).
ToolOutput RunReadOnlyTool(Project& project, absl::string_view tool,
                           absl::string_view arguments_json,
                           const Permissions* permissions = nullptr);

// An error for the model, capped like any result.
ToolOutput ErrorOutput(const absl::Status& status);

}  // namespace garuda

#endif  // GARUDA_LIB_TOOLS_RUN_H_
