// The model's tools as it sees them: their JSON schemas, and the check of a
// call's arguments against them, with messages written for the model.
#ifndef GARUDA_LIB_TOOLS_DEFINITIONS_H_
#define GARUDA_LIB_TOOLS_DEFINITIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "proto/provider.pb.h"

namespace garuda {

// Strict (spec T7): the bash tool has no outside_sandbox parameter, so the
// model never sees it, and a call that still sends it fails the check.
enum class ToolProfile { kDefault, kStrict };

inline constexpr const char* kToolNames[] = {"bash", "read_file", "list_files",
                                             "grep", "edit_file", "write_file"};

// The model's code questions (lib/tools/code_tools.h), listed only when the
// session has them (`code_tools`: a Java or Python project).
inline constexpr const char* kCodeToolNames[] = {"find_references", "callers",
                                                 "impact"};

inline bool IsCodeTool(absl::string_view tool) {
  for (const char* name : kCodeToolNames) {
    if (tool == name) return true;
  }
  return false;
}

std::vector<provider::ToolDefinition> ToolDefinitions(ToolProfile profile,
                                                      bool code_tools = false);

// The schema of one tool (a JSON object), or NOT_FOUND.
absl::StatusOr<google::protobuf::Value> ToolSchema(absl::string_view tool,
                                                   ToolProfile profile);

// Parses `arguments_json` and checks it against the tool's schema: a JSON
// object, every required field present, no field the schema does not list
// (additionalProperties is false for every tool), each of the declared type
// (an integer is a whole number). INVALID_ARGUMENT messages start with the
// tool's name and name the field, for the model to correct its call.
absl::StatusOr<google::protobuf::Value> CheckToolInput(
    absl::string_view tool, absl::string_view arguments_json,
    ToolProfile profile);

struct BashInput {
  std::string command;
  std::optional<int64_t> timeout_seconds;
  bool outside_sandbox = false;
};
struct ReadFileInput {
  std::string path;
  int64_t offset = 1;    // first line, from 1
  int64_t limit = 2000;  // lines
};
struct ListFilesInput {
  std::string path;  // "" is the project root
  std::string glob;
};
struct GrepInput {
  std::string pattern;
  std::string path;
  std::string glob;
};
struct EditFileInput {
  std::string path;
  std::string old_string;
  std::string new_string;
  bool replace_all = false;
};
struct WriteFileInput {
  std::string path;
  std::string content;
};

// CheckToolInput, then the typed fields.
absl::StatusOr<BashInput> ParseBashInput(absl::string_view json,
                                         ToolProfile profile);
absl::StatusOr<ReadFileInput> ParseReadFileInput(absl::string_view json);
absl::StatusOr<ListFilesInput> ParseListFilesInput(absl::string_view json);
absl::StatusOr<GrepInput> ParseGrepInput(absl::string_view json);
absl::StatusOr<EditFileInput> ParseEditFileInput(absl::string_view json);
absl::StatusOr<WriteFileInput> ParseWriteFileInput(absl::string_view json);

}  // namespace garuda

#endif  // GARUDA_LIB_TOOLS_DEFINITIONS_H_
