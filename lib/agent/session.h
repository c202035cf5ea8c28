// A garuda-agent session: the first line, the start conditions of the
// profile (spec T7), and the turn loop. The model request of each step is
// metered by garuda-budgeter (a refusal ends the turn with a "token
// budget" message to the person and the model); each tool call goes
// through tool_calls.h; the conversation is journaled as it goes. Slash
// commands and "!command" lines are handled here too. The session talks to
// the person only through Interaction and LineSource. The model's `task`
// calls run child agents, each a Session of its own on its own budget lease
// (children.h, children.cc); compaction is in compaction.cc.
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
#include "lib/agent/builtin_rows.h"
#include "lib/agent/children.h"
#include "lib/agent/conversation.h"
#include "lib/agent/interaction.h"
#include "lib/agent/journal.h"
#include "lib/agent/services.h"
#include "lib/agent/session_parts.h"
#include "lib/agent/tool_calls.h"
#include "lib/agent/turn_events.h"
#include "lib/agent/usage_meter.h"
#include "lib/budget/meter.h"
#include "lib/permissions/permissions.h"
#include "lib/provider/client.h"
#include "lib/tools/project.h"
#include "proto/agent_report.pb.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

// A turn stops after this many model requests, with a message.
inline constexpr int kMaxStepsPerTurn = 100;

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

// Why a turn ended: one-shot runs turn it into the exit status
// (lib/agent/agent.h), so scripts can tell a budget refusal and a cancel
// from other failures.
enum class TurnEnd {
  kAnswered,   // the model finished
  kBudget,     // the token budget refused the next request
  kCancelled,  // the person cancelled (Ctrl-C)
  kFailed,     // a provider error, no model, too many steps
};

// What a turn did, for one-shot mode.
struct TurnOutcome {
  std::string answer;  // the model's last text
  std::vector<ToolCallReport> tool_calls;
  UsageReport usage;
  std::string stopped;  // why it ended early, "" when the model finished
  TurnEnd end = TurnEnd::kAnswered;
  // kFailed because the turn reached kMaxStepsPerTurn requests (ACP's
  // max_turn_requests).
  bool step_limit = false;
  absl::Duration duration;  // from the prompt to the turn's end
  // The last model answer's stop reason ("end_turn", "max_tokens",
  // "refusal", "content_filter"...), for an editor's stopReason (lib/acp).
  std::string model_stop_reason;
  // What the turn's child agents used (each as its parent closed it); in
  // `usage` too once the turn ends.
  UsageReport children_usage;
};

class Session {
 public:
  // CheckProfile first; then shows the first line and the notices, and
  // records the start in the audit log.
  static absl::StatusOr<std::unique_ptr<Session>> Start(SessionConfig config,
                                                        SessionParts parts);

  // "garuda-agent: model ... | project ... | commands ... | profile ... |
  // sandbox ..."
  std::string FirstLine() const;

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
  const std::string& system_prompt() const { return system_prompt_; }
  bool staged() const;
  bool sandboxed() const { return config_.description.sandboxed(); }
  // The tools this agent offers (an editor's view asks it for their kinds).
  const ToolTable& tools() const { return tools_; }

 private:
  // The parts of a turn (RunTurn): the next model request (with the input
  // estimate from what was measured so far), the end of a turn whose request
  // failed (budget, cancel, provider; an error only when a helper is gone),
  // the usage of an answer, and the answer's tool calls (true when the
  // person cancelled them).
  provider::ModelRequest NextRequest(const ToolContext& tools, int step,
                                     size_t measured_messages) const;
  absl::Status StopForFailedRequest(const absl::Status& error,
                                    const provider::ModelRequest& request,
                                    TurnOutcome* outcome);
  // The turn after the prompt's checks, its requests metered by `meter`.
  absl::Status RunSteps(const std::string& prompt, const CancelFlag* cancel,
                        CountingMeter* meter, TurnOutcome* outcome);
  void CountUsage(const provider::ModelResponse& response, UsageReport* usage);
  absl::StatusOr<bool> RunToolCalls(const ToolContext& tools,
                                    const provider::ModelResponse& response,
                                    const CancelFlag* cancel,
                                    TurnOutcome* outcome);

  Session(SessionConfig config, SessionParts parts);

  // ---- Child agents (lib/agent/session_children.cc) ----
  // A child of `parent`: a fresh conversation with its rules and helpers,
  // over `parts` (its own interaction, audit tag, lease and model client).
  Session(const Session& parent, SessionParts parts, std::string agent_id);
  // Runs one answer's `task` calls as child agents of this one.
  friend class ChildAgents;
  // The slash commands of a line session (session_lines.cc).
  friend class SlashCommands;
  // A child whose next request the budget refused: one wrap-up request,
  // else a structured "budget exhausted" answer.
  absl::Status WrapUp(const ToolContext& tools, int step,
                      const CancelFlag* cancel, CountingMeter* meter,
                      TurnOutcome* outcome);
  // ---- Compaction (lib/agent/compaction.cc) ----
  // Replaces the conversation by the model's summary (true), journaled.
  // False with a notice when it did not happen (the request failed: then
  // `outcome`, when given, says why the turn ends).
  absl::StatusOr<bool> Compact(provider::RequestMeter* meter,
                               const CancelFlag* cancel, TurnOutcome* outcome);
  ToolContext Tools() const;
  // Which rows of the table a request offers.
  BuiltinOffers Offers() const;
  absl::Status CheckHelpers();

  SessionConfig config_;
  SessionParts parts_;
  std::string system_prompt_;
  Conversation conversation_;
  ToolTable tools_;
  // Output of "!command" lines, passed to the model with the next prompt.
  std::string pending_person_output_;
  int turns_ = 0;
  int64_t last_input_tokens_ = 0;

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
  int children_started_ = 0;
  // The running turn's meter (its last reservation is the floor's bound).
  CountingMeter* turn_meter_ = nullptr;
  // Agent id -> the task's description, for /budget.
  std::map<std::string, std::string> descriptions_;
  // The CancelFlag of the line being handled (for /compact's request).
  const CancelFlag* line_cancel_ = nullptr;
};

// Reads lines until the end of input or /exit; a turn interrupted by the
// CancelFlag returns to the prompt (the flag is reset before each line).
absl::Status RunLines(Session& session, LineSource& lines, CancelFlag* cancel);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_SESSION_H_
