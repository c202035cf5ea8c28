// What a session uses, handed in by whoever starts it (the one-shot and
// terminal programs, ACP's worker, a parent agent for its child); also what
// the session's pieces (/schedule) are given.
#ifndef GARUDA_LIB_AGENT_SESSION_PARTS_H_
#define GARUDA_LIB_AGENT_SESSION_PARTS_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "lib/agent/interaction.h"
#include "lib/agent/journal.h"
#include "lib/agent/mcp_rows.h"
#include "lib/agent/services.h"
#include "lib/agent/turn_events.h"
#include "lib/budget/client.h"
#include "lib/knowledge/code_tools_client.h"
#include "lib/permissions/permissions.h"
#include "lib/provider/client.h"
#include "lib/tools/project.h"

namespace garuda {
namespace agent {

// What the session uses; nothing is owned. `model` may be null (no model
// configured); `journal` may be null.
struct SessionParts {
  Interaction* interaction = nullptr;
  Project* project = nullptr;
  Permissions* permissions = nullptr;
  CommandService* stager = nullptr;
  ApplyService* applier = nullptr;
  AuditSink* audit = nullptr;
  budget::BudgetClient* budget = nullptr;
  // The code tools' server; may be null (no code tools).
  knowledge::CodeService* code = nullptr;
  provider::ModelClient* model = nullptr;
  // Told each step of a turn as it happens (stream-json); may be null.
  TurnEvents* events = nullptr;
  Journal* journal = nullptr;
  // OK while every helper runs (Helpers::CheckAlive); may be empty.
  std::function<absl::Status()> check_helpers;
  // /audit verify: the report's text (read-only, in-process).
  std::function<std::string()> verify_audit;
  // A job's session (tool_calls.h ToolContext): the edit tools' write check
  // and the refusal of every command outside the sandbox. Empty: no job.
  std::function<absl::Status(const std::string& path)> check_write;
  std::string host_refusal;
  // The session's MCP servers (lib/agent/mcp_servers.h); may be null.
  McpRows* mcp = nullptr;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_SESSION_PARTS_H_
