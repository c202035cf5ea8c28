// A garuda-agent session: the first line, the start conditions of the
// profile (spec T7), and one agent's pieces, which it hands to the turn
// loop (turn_loop.h) for each turn. The model request of each step is
// metered by garuda-budgeter (a refusal ends the turn with a "token
// budget" message to the person and the model: turn_stops.h); each tool
// call goes through tool_calls.h (answer_calls.h); the conversation is
// journaled as it goes (conversation.h). A person's lines (a prompt, a
// slash command: slash_commands.h, "!command") come in through HandleLine.
// The session talks to the person only through Interaction and LineSource.
// The model's `task` calls run child agents, each a Session of its own on
// its own budget lease (children.h, child_agents.h); compaction is
// compaction.h.
#ifndef GARUDA_LIB_AGENT_SESSION_H_
#define GARUDA_LIB_AGENT_SESSION_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/agent/agent_requests.h"
#include "lib/agent/builtin_rows.h"
#include "lib/agent/children.h"
#include "lib/agent/compaction.h"
#include "lib/agent/conversation.h"
#include "lib/agent/interaction.h"
#include "lib/agent/journal.h"
#include "lib/agent/services.h"
#include "lib/agent/session_parts.h"
#include "lib/agent/tool_calls.h"
#include "lib/agent/turn_events.h"
#include "lib/agent/turn_outcome.h"
#include "lib/agent/turn_stops.h"
#include "lib/agent/usage_meter.h"
#include "lib/budget/meter.h"
#include "lib/permissions/permissions.h"
#include "lib/provider/client.h"
#include "lib/tools/project.h"
#include "proto/agent_report.pb.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

struct SessionConfig {
  std::string session_id;
  bool strict = false;
  // The file that made the profile strict, for messages.
  std::string strict_source;
  // requireSandbox (also implied by strict).
  bool require_sandbox = false;
  // As garuda-stager set the session up.
  stager::SessionDescription description;
  // When no model is configured: how to configure one (the first line
  // says it; prompts are answered with it).
  std::string no_model_hint;
  // Notices for the first lines (settings, the stager's own).
  std::vector<std::string> notices;
  // The project's instructions (lib/agent/instructions.h InstructionsPrompt),
  // after the system prompt's own rules; may be empty.
  std::string instructions_prompt;
  // agents.* and model.contextWindow (lib/agent/children.h).
  ChildSettings agents;
};

// The strict profile without a working sandbox: FAILED_PRECONDITION with
// the reason and the fix; the session must not start.
absl::Status CheckProfile(const SessionConfig& config);

// The session's first line: "garuda-agent: model ... | project ... |
// commands ... | profile ... | sandbox ... | session ...".
std::string FirstLine(const SessionConfig& config, const SessionParts& parts);

// The stager runs commands staged (their changes asked about before they
// reach the project).
bool Staged(const SessionConfig& config);

struct ChildHost;

class Session {
 public:
  // CheckProfile first; then shows the first line and the notices, and
  // records the start in the audit log.
  static absl::StatusOr<std::unique_ptr<Session>> Start(SessionConfig config,
                                                        SessionParts parts);

  // Continues a resumed conversation (ReadConversation): calls left without
  // a result by an ended session get one saying they did not run.
  void Restore(std::vector<provider::ChatMessage> messages);

  enum class LineOutcome { kContinue, kExit };
  // One line from the person: a prompt, a slash command or "!command". An
  // error means the session cannot go on (a helper is gone).
  absl::StatusOr<LineOutcome> HandleLine(const std::string& line,
                                         const CancelFlag* cancel);

  // One prompt to the end of its turn. An error means the session cannot go
  // on; the turn's own failures (budget, provider, cancel) are in `stopped`.
  absl::StatusOr<TurnOutcome> RunTurn(const std::string& prompt,
                                      const CancelFlag* cancel);

  // Ends the session: audit event. The helpers are stopped by the caller.
  absl::Status End();
  ~Session();

  const std::vector<provider::ChatMessage>& messages() const {
    return conversation_.messages();
  }
  // The tools this agent offers (an editor's view asks it for their kinds).
  const ToolTable& tools() const { return tools_; }

 private:
  Session(SessionConfig config, SessionParts parts);
  // What a tool call of this agent runs with.
  ToolContext Tools() const;
  // Which rows of the table a request offers.
  BuiltinOffers Offers() const;
  // The MCP servers' rows the table lacks (parts_.mcp).
  void AddMcpRows();

  // ---- Child agents (lib/agent/session_children.cc) ----
  // A child of `parent`: a fresh conversation with its rules and helpers,
  // over `parts` (its own interaction, audit tag, lease and model client).
  Session(const Session& parent, SessionParts parts, std::string agent_id);
  // What this agent's child agents need of it (child_agents.h): its parts,
  // its next request, and a way to run a child as a Session of its own.
  ChildHost ForChildren();
  // A child whose next request the budget refused: one wrap-up request,
  // else a structured "budget exhausted" answer.
  absl::Status WrapUp(int step, const CancelFlag* cancel, CountingMeter* meter,
                      TurnOutcome* outcome);

  // Declared in the order they are made: the pieces below the tool table
  // are made from the members above them, in both constructors.
  SessionConfig config_;
  SessionParts parts_;
  std::string system_prompt_;
  Conversation conversation_;
  // 0 for the session's agent; a child is one deeper than its parent.
  int depth_ = 0;
  std::string agent_id_ = "main";
  // Shared by every agent of the session.
  std::shared_ptr<AgentLocks> locks_;
  Interaction* root_interaction_ = nullptr;
  // The session's audit channel itself (every agent's AgentAudit records
  // through it), and the session's agent's own sink behind the audit lock.
  AuditSink* session_audit_ = nullptr;
  std::unique_ptr<AgentAudit> own_audit_;
  ToolTable tools_;
  AgentRequests requests_{
      system_prompt_,
      conversation_,
      tools_,
      config_.strict ? ToolProfile::kStrict : ToolProfile::kDefault,
      parts_.model,
      RequestOwner{config_.session_id, agent_id_, depth_}};
  TurnStops stops_{parts_, conversation_};
  Compaction compaction_{
      parts_, conversation_,      requests_,
      stops_, config_.session_id, config_.agents.context_window};

  // Output of "!command" lines, passed to the model with the next prompt.
  std::string pending_person_output_;
  int children_started_ = 0;
  // The running turn's meter (its last reservation is the floor's bound).
  CountingMeter* turn_meter_ = nullptr;
  // Agent id -> the task's description, for /budget.
  std::map<std::string, std::string> descriptions_;
};

// Reads lines until the end of input or /exit; a turn interrupted by the
// CancelFlag returns to the prompt (the flag is reset before each line).
absl::Status RunLines(Session& session, LineSource& lines, CancelFlag* cancel);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_SESSION_H_
