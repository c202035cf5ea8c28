// What goes to garuda-applier: the edit rows' handler (edit_file,
// write_file: a one-file change list) and, for a command's changes
// (command_tool.h), the apply itself and its audit event.
#ifndef GARUDA_LIB_AGENT_APPLY_CALL_H_
#define GARUDA_LIB_AGENT_APPLY_CALL_H_

#include "absl/status/statusor.h"
#include "lib/agent/services.h"
#include "lib/agent/tool_run.h"
#include "lib/tools/builtin_tools.h"

namespace garuda {
namespace agent {

// The handler of an edit row: a job's scope first, then a deny rule before
// the file is read, the change list, the decision (the applier asks when
// a question is due), the apply.
absl::StatusOr<ToolCallDone> RunEditCall(ToolRun& run,
                                         const EditToolSpec& tool);

// The applier may ask the person on the terminal during the call: the
// terminal is handed over for its time.
absl::StatusOr<applier::ApplyOutcome> ApplyThroughApplier(
    const ToolContext& context, const ProposedChange& change);

// An apply that failed: returned when the session cannot go on (the
// applier is gone), else audited ("apply failed") and OK.
absl::Status AuditApplyFailure(ToolRun& run, const absl::Status& failure);

// The audit event of an apply's outcome.
absl::Status AuditApply(ToolRun& run, const applier::ApplyOutcome& outcome);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_APPLY_CALL_H_
