// The built-in tools' rows without their handlers, grouped by how the
// session runs them: the command tool through garuda-stager, the read tools
// in-process, the edit tools as a one-file change list for garuda-applier,
// the code tools through the code-tools server. The session attaches one
// handler per group (lib/agent/builtin_rows.h); adding a tool to a group
// here is all a new tool of that kind needs (docs/tools.md).
#ifndef GARUDA_LIB_TOOLS_BUILTIN_TOOLS_H_
#define GARUDA_LIB_TOOLS_BUILTIN_TOOLS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/struct.pb.h"
#include "lib/tools/edit_tools.h"
#include "lib/tools/project.h"
#include "lib/tools/read_tools.h"
#include "lib/tools/tool_table.h"

namespace garuda {

struct ReadToolSpec {
  ToolSpec spec;
  // The tool's text for a checked input, before the cap.
  std::function<absl::StatusOr<std::string>(
      Project&, const google::protobuf::Value& input, const HiddenPredicate&)>
      run;
};

struct EditToolSpec {
  ToolSpec spec;
  // The one-file change list of a checked input.
  std::function<absl::StatusOr<ProposedEdit>(
      const Project&, const google::protobuf::Value& input)>
      propose;
};

struct BuiltinTools {
  ToolSpec command;                 // bash
  std::vector<ReadToolSpec> reads;  // read_file, list_files, grep
  std::vector<EditToolSpec> edits;  // edit_file, write_file
  std::vector<ToolSpec> code;       // find_references, callers, impact
};
const BuiltinTools& Builtins();

// Every built-in row, without handlers: for the checks and lines that need
// no session (the tests, `garuda-agent tool`, a report's lines).
const ToolTable& BuiltinSpecs();

}  // namespace garuda

#endif  // GARUDA_LIB_TOOLS_BUILTIN_TOOLS_H_
