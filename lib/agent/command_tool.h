// The command row's handler (bash) and what a command's changes go
// through: garuda-stager runs the command, watched (its progress shown,
// stopped by the turn's cancel); in staged mode its change list goes to
// garuda-applier, which asks the T5 question itself (or, with nobody to
// ask, re-checks the rules), or is kept for review. The person's own
// "!command" lines take the same way.
#ifndef GARUDA_LIB_AGENT_COMMAND_TOOL_H_
#define GARUDA_LIB_AGENT_COMMAND_TOOL_H_

#include <string>

#include "absl/status/statusor.h"
#include "lib/agent/services.h"
#include "lib/agent/tool_run.h"

namespace garuda {
namespace agent {

// The handler of the command row.
absl::StatusOr<ToolCallDone> RunCommandCall(ToolRun& run);

// The line a command's settled changes end with, and whether that is an
// error for the model.
struct ChangeOutcome {
  std::string line;
  bool is_error = false;
};
absl::StatusOr<ChangeOutcome> SettleChangeSet(ToolRun& run,
                                              CommandService::Ran& ran,
                                              const std::string& reason);

// The name of the command tool, for the audit events of the person's own
// commands.
const std::string& CommandToolName();

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_COMMAND_TOOL_H_
