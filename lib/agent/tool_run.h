// One tool call in progress: what every row's handler shares. Run looks
// the call up in the session's table, checks its input, makes its
// permission request and shows its line, then hands it to the row's
// handler, which decides (Decide), acts and ends it (Finish or Refused).
#ifndef GARUDA_LIB_AGENT_TOOL_RUN_H_
#define GARUDA_LIB_AGENT_TOOL_RUN_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "google/protobuf/struct.pb.h"
#include "lib/agent/tool_calls.h"
#include "lib/changeset/changeset.h"
#include "lib/permissions/permissions.h"
#include "lib/tools/run.h"
#include "lib/tools/tool_table.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

// The helpers that decide themselves what they do (lib/consent).
inline constexpr char kStagerProgram[] = "garuda-stager";
inline constexpr char kApplierProgram[] = "garuda-applier";

// A helper that is gone, or that broke its channel: the session stops.
bool IsFatal(const absl::Status& status);

// A command's output as the person sees it under the call's line, and
// whether the person stopped the command.
struct ShownOutput {
  std::string output;
  bool stopped = false;
};

class ToolRun {
 public:
  ToolRun(const ToolContext& context, const provider::ToolCall& call);

  absl::StatusOr<ToolCallDone> Run();

  const ToolContext& context() const { return c_; }
  const provider::ToolCall& call() const { return call_; }
  // The call's checked input: set once Run reached the handler.
  const google::protobuf::Value& input() const { return input_; }
  const PermissionRequest& request() const { return request_; }
  // The call's line, as the person saw it.
  const std::string& summary() const { return summary_; }
  ToolCallReport& report() { return done_.report; }

  // Decides; asks when needed (call_decision.h), and audits the decision.
  // Returns the decision text when the call may run, or nullopt with the
  // model's result already made (TakeDone). With a `helper` (the program
  // that will act), a call that would ask is only proposed. `edit`, when it
  // has a change, is what an editor's diff view shows with the question.
  absl::StatusOr<std::optional<std::string>> Decide(
      bool ask_by_default, const std::string& question,
      const std::string& detail, const char* helper = nullptr,
      const ChangeSet* edit = nullptr);
  // The result a refusing Decide made.
  ToolCallDone TakeDone() { return std::move(done_); }

  // An audit event about this call; its target is the permission argument,
  // or the start of the arguments when the input failed its check.
  absl::Status Audit(absl::string_view kind, absl::string_view decision,
                     absl::string_view reason);

  // Ends the call: the model's result, the report, and what the person
  // sees (with `shown`, a command's output, under it when the row shows
  // one).
  absl::StatusOr<ToolCallDone> Finish(const std::string& decision,
                                      ToolOutput output,
                                      const std::string& outcome,
                                      ShownOutput shown = ShownOutput());
  absl::StatusOr<ToolCallDone> Refused(const std::string& decision,
                                       const std::string& text);
  // The editor's answer the helper gets (RelaysAnswers only).
  const std::optional<RelayedAnswer>& relayed() const { return relayed_; }

 private:
  const ToolContext& c_;
  const provider::ToolCall& call_;
  const ToolRow* row_ = nullptr;
  google::protobuf::Value input_;
  PermissionRequest request_;
  std::string summary_;
  ToolCallDone done_;
  std::optional<RelayedAnswer> relayed_;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_TOOL_RUN_H_
