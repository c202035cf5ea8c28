// Child agents: the model's `task` tool (spec T9, docs/budget.md).
//
// A child is a fresh conversation with its parent's system prompt rules,
// tools (its own `task` up to agents.maxDepth), permissions, mode and
// helpers. It runs on its own thread with its own model connection and its
// own lease on garuda-budgeter (OpenChild): the ledger, not the agent,
// decides how much it may spend, so parallel children can never take the
// same tokens. Its tool calls go through the same stager, applier and
// questions one at a time (one lock for every agent of the session); its
// audit events carry its agent id.
//
// The parent runs the `task` calls of one response here: at most
// agents.maxParallel at once, the rest waiting; before each child starts the
// parent's floor (the bound of its own next request) is set on the
// budgeter; every started child is awaited, also after a failure or a
// cancel; the results come back in call order, each answer capped at
// 20 000 characters.
#ifndef GARUDA_LIB_AGENT_CHILDREN_H_
#define GARUDA_LIB_AGENT_CHILDREN_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "lib/agent/interaction.h"
#include "lib/agent/services.h"
#include "lib/agent/tool_calls.h"
#include "proto/agent_report.pb.h"
#include "proto/provider.pb.h"
#include "proto/settings.pb.h"

namespace garuda {
namespace agent {

inline constexpr char kTaskTool[] = "task";

// agents.* and model.contextWindow, defaults filled in.
struct ChildSettings {
  int max_depth = 2;
  int max_parallel = 4;
  int64_t child_token_budget = 150000;
  int64_t context_window = 200000;
  // Off only in the negative control of the floor's test: without the
  // floor a child's lease can take what the parent needs to answer.
  bool keep_floor = true;
  // The rule before issue 28, kept for bench/budget to compare (not a
  // setting): each pending answer counted at its worst case (20 000
  // characters, each escaped to six), a lease of childTokenBudget for
  // whichever child starts first, and a refusal instead of a wait.
  bool worst_case_floor = false;
  // Set by a parent for its child (0 for the session's agent): the child's
  // lease, and how many characters its answer may carry in the parent's
  // next request (after JSON escaping).
  int64_t lease = 0;
  int64_t answer_chars = 0;
};
ChildSettings ChildSettingsFrom(const AgentSettings& agents,
                                const ModelSettings& model);

// The tool the model sees (an agent below maxDepth).
provider::ToolDefinition TaskToolDefinition();
// Its row: a batched row, whose calls the session runs as child agents
// after an answer's other calls (Session::RunTasks).
ToolRow TaskRow();

struct TaskArguments {
  std::string description;
  std::string prompt;
};
// {"description": "...", "prompt": "..."}: both non-empty strings, nothing
// else. The error says what is wrong, for the model.
absl::StatusOr<TaskArguments> ParseTaskArguments(absl::string_view json);

// The first 300 bytes of `text` on one line (line breaks and tabs as
// spaces), for audit targets and the person's lines.
std::string OneLineOf(absl::string_view text);

// A child's answer as its parent's model gets it: at most
// kSubagentResultCapChars bytes (budget/meter.h), the note that says it was
// cut inside the cap, never a broken UTF-8 sequence.
std::string CapChildAnswer(absl::string_view answer, bool* cut);

// The note a child's system prompt ends with, naming the most its answer
// may carry (0: kSubagentResultCapChars). It starts with kChildPromptMark,
// so a grandchild's prompt is its parent's without it.
inline constexpr char kChildPromptMark[] = "\n\nYou are a child agent";
std::string ChildPromptNote(int64_t answer_chars);

// How many characters a text takes where it is carried (in a request body,
// after JSON escaping).
using CarriedSize = std::function<int64_t(absl::string_view text)>;

// `answer` cut so that it carries at most `limit` characters as `carried`
// measures them, the note that says it was cut included; never a broken
// UTF-8 sequence. Whole when it fits.
std::string CutChildAnswer(absl::string_view answer, int64_t limit,
                           const CarriedSize& carried, bool* cut);

// What every agent of one session shares: one lock for the helpers and the
// questions (staged runs one at a time, one question on the terminal), one
// for the audit channel and one for what the person sees. `audit` and
// `display` may be taken while `tools` is held, never the other way.
struct AgentLocks {
  absl::Mutex tools;
  absl::Mutex audit;
  absl::Mutex display;
};

// The person's view of a child at `depth`: its tool calls and notices
// indented under the `-> task:` line, its streamed text not shown (it is
// the parent's tool result), every call under the display lock.
class ChildInteraction : public Interaction {
 public:
  ChildInteraction(Interaction* root, AgentLocks* locks, int depth)
      : root_(root), locks_(locks), indent_(2 * depth, ' ') {}

  bool CanAsk() const override;
  void ShowText(absl::string_view text) override {}
  void ShowRetry(absl::string_view reason) override;
  void ShowToolCall(const ToolCallView& call) override;
  void ShowToolOutcome(const ToolOutcomeView& outcome) override;
  void ShowNotice(absl::string_view line) override;
  void ShowCommandProgress(const CommandProgress& progress) override;
  void HandOverTerminal() override;
  void TakeBackTerminal() override;
  PermissionAnswer AskPermission(const PermissionQuestion& question) override;
  Answer AskChangeSet(const ChangeSet& change_set,
                      const Rendered& rendered) override;
  // An editor's session (lib/acp): a child's questions are relayed as its
  // parent's are.
  bool RelaysAnswers() const override;
  PermissionAnswer AskEdit(const PermissionQuestion& question,
                           const ChangeSet& change_set) override;

 private:
  Interaction* root_;
  AgentLocks* locks_;
  std::string indent_;
};

// The session's audit sink for one agent: every event gets "agent": <id>
// in its fields (none for the session's own agent, whose events stay as
// they were), under the audit lock (the sink is one channel).
class AgentAudit : public AuditSink {
 public:
  AgentAudit(AuditSink* inner, AgentLocks* locks, std::string agent_id)
      : inner_(inner), locks_(locks), agent_id_(std::move(agent_id)) {}
  absl::Status Record(const audit::AuditEvent& event) override;
  absl::Status Close() override { return absl::OkStatus(); }

 private:
  AuditSink* inner_;
  AgentLocks* locks_;
  std::string agent_id_;
};

// The result of one `task` call as its parent gets it.
struct TaskDone {
  ToolCallDone done;
  UsageReport usage;  // the child's, with charged_tokens as closed
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_CHILDREN_H_
