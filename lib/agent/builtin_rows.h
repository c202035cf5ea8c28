// The built-in tools as rows of a session's table: the rows of
// lib/tools/builtin_tools.h with the session's handler for each group
// (bash through garuda-stager, the read tools in-process, the edit tools
// through garuda-applier, the code tools through the code-tools server),
// and the `task` row (children.h).
#ifndef GARUDA_LIB_AGENT_BUILTIN_ROWS_H_
#define GARUDA_LIB_AGENT_BUILTIN_ROWS_H_

#include <functional>

#include "absl/status/status.h"
#include "lib/tools/tool_table.h"

namespace garuda {
namespace agent {

// What decides which rows a request offers, each evaluated per request.
struct BuiltinOffers {
  // The session has code tools (a Java or Python project).
  std::function<bool()> code_tools;
  // The agent is above agents.maxDepth: it may start child agents.
  std::function<bool()> task;
};

absl::Status RegisterBuiltinTools(ToolTable& table, BuiltinOffers offers);

// A table of the built-in rows alone. The rows are compiled in: one that
// does not register is a programmer's error, and the program stops.
ToolTable BuiltinToolTable(BuiltinOffers offers);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_BUILTIN_ROWS_H_
