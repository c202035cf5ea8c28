// The model's code tools: find_references, callers and impact over the
// project's Java and Python files, asked of the code-tools server
// (lib/knowledge/code_tools_client.h). What the model reads starts with the
// approximate warning whenever the answer is not compiler-grade (also when
// it is empty, names nothing that resolves, or was cut); what the person
// sees is one line, marked ≈ in that case.
#ifndef GARUDA_LIB_TOOLS_CODE_TOOLS_H_
#define GARUDA_LIB_TOOLS_CODE_TOOLS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/knowledge/code_tools_client.h"
#include "lib/tools/project.h"
#include "lib/tools/read_tools.h"
#include "lib/tools/run.h"

namespace garuda {

struct CodeToolInput {
  std::string tool;  // find_references, callers, impact
  // Either a position (path relative to the root as the model wrote it)...
  std::string path;
  int64_t line = 0;
  int64_t column = 0;
  // ...or a declaration's name.
  std::string symbol;
  int64_t depth = 0;  // impact; 0 is the default
};

// CheckToolInput, then: `symbol`, or all of path, line and column, not both.
absl::StatusOr<CodeToolInput> ParseCodeToolInput(absl::string_view tool,
                                                 absl::string_view json);

// Hits per answer the model receives; more are cut, and the answer says so
// (and stays approximate).
inline constexpr int kCodeToolMaxResults = 200;

struct CodeToolOutcome {
  ToolOutput output;  // the model's text, capped
  std::string screen;  // one line for the person: "≈ callers of ...: 3 results"
};

// Asks `service` and renders the answer. Hits in files that `hidden` covers
// (a deny rule for reading them) are left out, and the answer then says so
// and is approximate. Never fails: a server that cannot answer is an error
// result for the model.
CodeToolOutcome RunCodeTool(const Project& project,
                            knowledge::CodeService& service,
                            const CodeToolInput& input,
                            const HiddenPredicate& hidden = {});

}  // namespace garuda

#endif  // GARUDA_LIB_TOOLS_CODE_TOOLS_H_
