// What the person sees of a tool call: its line with the arguments that say
// what it does (the grep pattern, the list_files folder, the read_file
// lines), and a command's output as captured (the terminal shows its last
// lines, lib/terminal/output_tail.h).
#ifndef GARUDA_LIB_AGENT_TOOL_DISPLAY_H_
#define GARUDA_LIB_AGENT_TOOL_DISPLAY_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "proto/stager_service.pb.h"

namespace garuda {
namespace agent {

// The line of a built-in tool's call (ToolTable::Summary over
// lib/tools/builtin_tools.h): "grep \"TODO\" in src (*.c)", "read_file
// src/x.c lines 10-49", "list_files src", "bash: make test". Arguments that
// do not parse, or a tool without a known shape: "tool: " and the start of
// `fallback` (the permission argument) or of the JSON. One line, at most
// about 200 characters of each argument.
std::string ToolCallSummary(absl::string_view tool,
                            absl::string_view arguments_json,
                            absl::string_view fallback);

// A command's captured output: stdout, then stderr, each followed by a line
// saying so when the capture cut it. With `headers` (as the model sees it)
// each stream comes after a "stdout:" or "stderr:" line. "" when the
// command printed nothing.
std::string CapturedOutput(const stager::CommandResult& result, bool headers);

// What the person sees under the call: CapturedOutput without headers.
inline std::string CommandOutputForPerson(const stager::CommandResult& result) {
  return CapturedOutput(result, /*headers=*/false);
}

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_TOOL_DISPLAY_H_
