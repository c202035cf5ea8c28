// What a Garuda session shows and asks, as the Agent Client Protocol says it
// to an editor: model text as agent_message_chunk, each tool call as
// tool_call and tool_call_update (kind, title, locations, output, diffs),
// usage as usage_update, and every question a helper would have asked on a
// terminal as session/request_permission, whose answer the agent relays
// (the helpers run with --consent=relayed; docs/acp.md). The interaction
// (what the session shows and asks) and its turn events (each call's
// arguments and result, the usage) are two objects sharing the turn's
// calls; the questions are lib/acp/acp_questions.h's.
#ifndef GARUDA_LIB_ACP_ACP_INTERACTION_H_
#define GARUDA_LIB_ACP_ACP_INTERACTION_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "lib/acp/acp_questions.h"
#include "lib/acp/acp_updates.h"
#include "lib/acp/json_rpc.h"
#include "lib/acp/worker_link.h"
#include "lib/agent/interaction.h"
#include "lib/agent/turn_events.h"
#include "lib/tools/project.h"
#include "lib/tools/tool_table.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace acp {

// The built-in tools' table (lib/agent/builtin_rows.h), which an
// interaction asks until its session gives it its own (set_tools).
const ToolTable& BuiltinToolRows();

// A tool call's ACP fields from the model's arguments: the title (the
// row's, else the name and the "path"), the paths it touches (relative
// paths resolved under `root`) and its raw input.
struct ToolCallFields {
  std::string title;
  std::vector<std::string> locations;
  Value raw_input;
};
ToolCallFields FieldsOf(const ToolTable& tools, const provider::ToolCall& call,
                        const std::string& root);

// The calls of the running turn, shared by the interaction (which shows
// them as they run) and the turn events (which learn of them first, and of
// their results).
struct TurnCalls {
  // The session's tool table (not owned): each call's kind and title.
  const ToolTable* tools = &BuiltinToolRows();
  std::map<std::string, provider::ToolCall> by_id;  // this turn's
  std::string current;                              // the call being run
};

// The session's TurnEvents: each call's arguments, its result (with the
// diffs agreed to) and the usage, as session/update; and a resumed
// conversation's past turns.
class AcpTurnEvents : public agent::TurnEvents {
 public:
  // Not owned: all live as long as the interaction that holds this.
  AcpTurnEvents(SessionUpdates* updates, TurnCalls* calls,
                PermissionQuestions* questions, const Project* project,
                int64_t token_limit)
      : updates_(updates),
        calls_(calls),
        questions_(questions),
        project_(project),
        token_limit_(token_limit) {}

  // The session's tool table (not owned), once it has one.
  void set_tools(const ToolTable* tools) { calls_->tools = tools; }
  // Before each prompt: usage_update counts the session's tokens since it
  // was opened here, the turn's on top of the turns before.
  void StartTurn() { turn_base_ = session_used_; }
  // A resumed conversation, as the updates the editor would have seen.
  void Replay(const std::vector<provider::ChatMessage>& messages);

  void ToolCall(const provider::ToolCall& call) override;
  void ToolResult(const agent::ToolCallReport& report) override;
  void Usage(const agent::UsageReport& usage) override;

 private:
  SessionUpdates* updates_;
  TurnCalls* calls_;
  PermissionQuestions* questions_;
  const Project* project_;
  int64_t token_limit_;
  int64_t turn_base_ = 0;
  int64_t session_used_ = 0;
};

class AcpInteraction : public agent::Interaction {
 public:
  // `project` (not owned) gives the old contents for diffs.
  AcpInteraction(WorkerLink* link, const Project* project, int64_t token_limit);

  void set_session_id(const std::string& id) { updates_.set_session_id(id); }
  // Notices shown outside a turn are kept until TakeNotices (the session's
  // first lines go out after the session/new answer).
  void set_in_turn(bool in_turn) { in_turn_ = in_turn; }
  std::string TakeNotices();
  // The session's TurnEvents, beside this interaction.
  AcpTurnEvents& events() { return events_; }

  bool CanAsk() const override { return true; }
  bool RelaysAnswers() const override { return true; }
  void ShowText(absl::string_view text) override;
  void ShowRetry(absl::string_view reason) override;
  void ShowToolCall(const agent::ToolCallView& call) override;
  void ShowToolOutcome(const agent::ToolOutcomeView& outcome) override {}
  void ShowNotice(absl::string_view line) override;
  // A running command: its elapsed time and last line, as an in_progress
  // tool_call_update, at most once a second.
  void ShowCommandProgress(const agent::CommandProgress& progress) override;
  PermissionAnswer AskPermission(const PermissionQuestion& question) override {
    return questions_.AskPermission(calls_.current, question);
  }
  PermissionAnswer AskEdit(const PermissionQuestion& question,
                           const ChangeSet& change_set) override {
    return questions_.AskEdit(calls_.current, question, change_set);
  }
  Answer AskChangeSet(const ChangeSet& change_set,
                      const Rendered& rendered) override {
    return questions_.AskChangeSet(calls_.current, change_set, rendered);
  }

 private:
  SessionUpdates updates_;
  const Project* project_;
  TurnCalls calls_;
  PermissionQuestions questions_;
  AcpTurnEvents events_;
  bool in_turn_ = false;
  std::string notices_;
  absl::Duration progress_shown_ = absl::ZeroDuration();
};

}  // namespace acp
}  // namespace garuda

#endif  // GARUDA_LIB_ACP_ACP_INTERACTION_H_
