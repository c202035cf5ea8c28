// The built-in tools' inputs as typed structs, read from a call's arguments
// after the check against the tool's schema (lib/tools/tool_table.h), with
// messages written for the model. The rows themselves are in
// lib/tools/builtin_tools.h.
#ifndef GARUDA_LIB_TOOLS_DEFINITIONS_H_
#define GARUDA_LIB_TOOLS_DEFINITIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "lib/tools/tool_table.h"
#include "proto/provider.pb.h"

namespace garuda {

// The built-in tools as the model request lists them (the code tools only
// with `code_tools`: a Java or Python project).
std::vector<provider::ToolDefinition> ToolDefinitions(ToolProfile profile,
                                                      bool code_tools = false);

// ToolTable::Schema and ToolTable::CheckInput over the built-in tools.
absl::StatusOr<google::protobuf::Value> ToolSchema(absl::string_view tool,
                                                   ToolProfile profile);
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

// The typed fields of an input that passed its check.
BashInput BashInputOf(const google::protobuf::Value& input);
ReadFileInput ReadFileInputOf(const google::protobuf::Value& input);
ListFilesInput ListFilesInputOf(const google::protobuf::Value& input);
GrepInput GrepInputOf(const google::protobuf::Value& input);
EditFileInput EditFileInputOf(const google::protobuf::Value& input);
WriteFileInput WriteFileInputOf(const google::protobuf::Value& input);

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
