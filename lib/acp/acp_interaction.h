// What a Garuda session shows and asks, as the Agent Client Protocol says it
// to an editor: model text as agent_message_chunk, each tool call as
// tool_call and tool_call_update (kind, title, locations, output, diffs),
// usage as usage_update, and every question a helper would have asked on a
// terminal as session/request_permission, whose answer the agent relays
// (the helpers run with --consent=relayed; docs/acp.md).
#ifndef GARUDA_LIB_ACP_ACP_INTERACTION_H_
#define GARUDA_LIB_ACP_ACP_INTERACTION_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
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

class AcpInteraction : public agent::Interaction, public agent::TurnEvents {
 public:
  // `project` (not owned) gives the old contents for diffs.
  AcpInteraction(WorkerLink* link, const Project* project, int64_t token_limit);

  void set_session_id(const std::string& id) { session_id_ = id; }
  // The session's tool table (not owned): each call's kind and title.
  void set_tools(const ToolTable* tools) { tools_ = tools; }
  // Notices shown outside a turn are kept until TakeNotices (the session's
  // first lines go out after the session/new answer).
  void set_in_turn(bool in_turn) { in_turn_ = in_turn; }
  std::string TakeNotices();
  // Before each prompt: usage_update counts the session's tokens since it
  // was opened here, the turn's on top of the turns before.
  void StartTurn() { turn_base_ = session_used_; }
  // One session/update of this session.
  void Update(Value update);

  // Interaction
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
  PermissionAnswer AskPermission(const PermissionQuestion& question) override;
  PermissionAnswer AskEdit(const PermissionQuestion& question,
                           const ChangeSet& change_set) override;
  Answer AskChangeSet(const ChangeSet& change_set,
                      const Rendered& rendered) override;

  // TurnEvents
  void ToolCall(const provider::ToolCall& call) override;
  void ToolResult(const agent::ToolCallReport& report) override;
  void Usage(const agent::UsageReport& usage) override;

  // A resumed conversation, as the updates the editor would have seen.
  void Replay(const std::vector<provider::ChatMessage>& messages);

 private:
  PermissionAnswer Ask(const PermissionQuestion& question, Value content);
  const ToolTable* tools_ = &BuiltinToolRows();
  // session/request_permission of this session: the option selected, or
  // nullopt (WorkerLink::RequestPermission).
  std::optional<std::string> RequestPermission(Value tool_call, Value options);
  // The diff content blocks of a change list (files whose new content is in
  // memory; the rest are in `rendered_text`).
  Value Diffs(const ChangeSet& change_set);
  // The file's present content; "" when there is none; nullopt when it
  // cannot be shown.
  std::optional<std::string> OldText(const std::string& relative) const;
  Value ToolCallUpdate(const std::string& id);
  static Value TextBlock(absl::string_view text);
  static Value TextContent(absl::string_view text);

  WorkerLink* link_;
  const Project* project_;
  int64_t token_limit_;
  std::string session_id_;
  bool in_turn_ = false;
  int64_t turn_base_ = 0;
  int64_t session_used_ = 0;
  std::string notices_;
  std::map<std::string, provider::ToolCall> calls_;  // by id, this turn
  std::string current_call_;                         // the call being run
  absl::Duration progress_shown_ = absl::ZeroDuration();
  std::map<std::string, Value> diffs_;  // shown per call
};

}  // namespace acp
}  // namespace garuda

#endif  // GARUDA_LIB_ACP_ACP_INTERACTION_H_
