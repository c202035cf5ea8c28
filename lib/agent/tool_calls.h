// One tool call of the model, from its arguments to the result the model
// receives: the lookup in the session's tool table (lib/tools/tool_table.h),
// the input check (with the session's profile), the permission decision
// (deny wins; a session answer is remembered), the question, and the row's
// handler (lib/agent/builtin_rows.h for the built-in tools). Every step is
// an audit event.
#ifndef GARUDA_LIB_AGENT_TOOL_CALLS_H_
#define GARUDA_LIB_AGENT_TOOL_CALLS_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/agent/interaction.h"
#include "lib/agent/services.h"
#include "lib/base/cancel_flag.h"
#include "lib/knowledge/code_tools_client.h"
#include "lib/permissions/permissions.h"
#include "lib/tools/definitions.h"
#include "lib/tools/project.h"
#include "lib/tools/tool_table.h"
#include "proto/agent_report.pb.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

using garuda::ToolCallDone;

struct ToolContext {
  std::string session_id;
  // The session's tools; a call of a name not in it is an error result.
  const ToolTable* tools = nullptr;
  ToolProfile profile = ToolProfile::kDefault;
  // The OS sandbox works: bash runs in it without a question. Without it
  // every command runs on the host and asks first.
  bool sandboxed = true;
  // requireSandbox (implied by strict): no command runs on the host, and
  // the stager would refuse one anyway; such calls are denied at once.
  bool require_sandbox = false;
  bool staged = false;
  Project* project = nullptr;
  Permissions* permissions = nullptr;
  Interaction* interaction = nullptr;
  CommandService* stager = nullptr;
  ApplyService* applier = nullptr;
  AuditSink* audit = nullptr;
  // find_references, callers, impact (garuda-agent tool serve); null when
  // the session has no code tools.
  knowledge::CodeService* code = nullptr;
  // A job (lib/jobs): an edit tool's write of the path it reaches is
  // checked against the job's scope before any rule (an allow rule does not
  // widen it); not OK is a denial. Empty: not a job.
  std::function<absl::Status(const std::string& path)> check_write;
  // Not empty: every command outside the sandbox is denied before any rule,
  // with this reason (a job's).
  std::string host_refusal;
  // The turn's cancel (Ctrl-C): a running command is stopped when it is set.
  // May be null.
  const CancelFlag* cancel = nullptr;
  // The session folder: staged changes no person could answer are kept
  // there (kept_changes.h); "" keeps none.
  std::string session_dir;
};

// The audit event of `kind` for a tool.
audit::AuditEvent MakeEvent(absl::string_view kind, absl::string_view tool,
                            absl::string_view target,
                            absl::string_view decision,
                            absl::string_view reason);

// The model's result of `call` and the report of it. An error status only
// when the session cannot go on (a helper is gone, the audit refused an
// event); everything the model can act on is an error result instead.
absl::StatusOr<ToolCallDone> RunToolCall(const ToolContext& context,
                                         const provider::ToolCall& call);

// A command the person typed as "!command": through the stager, in the
// sandbox in the strict profile, else on the host as the person's own
// command (no question: the person asked for it). In staged mode its
// changes get the same question. Returns the text to show (and to pass to
// the model with the next prompt).
absl::StatusOr<std::string> RunPersonCommand(const ToolContext& context,
                                             const std::string& command);

// The text of a command's result as the model sees it: the description,
// stdout and stderr (each said when cut), and that the person stopped it
// when the result is STOPPED.
std::string FormatCommandResult(const stager::CommandResult& result);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_TOOL_CALLS_H_
