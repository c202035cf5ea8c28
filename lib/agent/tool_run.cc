#include "lib/agent/tool_run.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/agent/call_decision.h"
#include "lib/base/status_macros.h"
#include "lib/provider/json.h"
#include "lib/tools/result.h"

namespace garuda {
namespace agent {
namespace {

constexpr size_t kAuditTargetChars = 4096;

}  // namespace

bool IsFatal(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDataLoss(status);
}

ToolRun::ToolRun(const ToolContext& context, const provider::ToolCall& call)
    : c_(context), call_(call) {
  done_.result.set_tool_call_id(call.id());
  done_.report.set_id(call.id());
  done_.report.set_tool(call.name());
  done_.report.set_arguments_json(call.arguments_json());
}

absl::StatusOr<ToolCallDone> ToolRun::Run() {
  const ToolTable& tools = *c_.tools;
  row_ = tools.Find(call_.name());
  absl::StatusOr<PermissionRequest> request = tools.PermissionRequestFor(
      *c_.project, call_.name(), call_.arguments_json(), c_.profile);
  summary_ = tools.Summary(call_.name(), call_.arguments_json(),
                           request.ok() ? request->argument : "");
  c_.interaction->ShowToolCall({call_.id(), call_.name(), summary_});
  if (request.ok() && (row_->batched || !row_->handler)) {
    request = absl::FailedPreconditionError(
        absl::StrCat(call_.name(), " cannot be called here"));
  }
  if (!request.ok()) {
    RETURN_IF_ERROR(
        Audit("tool_call", "invalid", std::string(request.status().message())));
    return Finish("input check failed", ErrorOutput(request.status()),
                  absl::StrCat("the call's input was refused: ",
                               request.status().message()));
  }
  request_ = *std::move(request);
  // Checked by PermissionRequestFor.
  input_ = *tools.CheckInput(call_.name(), call_.arguments_json(), c_.profile);
  return row_->handler(*this);
}

absl::Status ToolRun::Audit(absl::string_view kind, absl::string_view decision,
                            absl::string_view reason) {
  // The target is the command or path; for a call whose input failed its
  // check, the start of its arguments (a write_file's content can be
  // large).
  absl::string_view target = request_.argument.empty()
                                 ? absl::string_view(call_.arguments_json())
                                 : absl::string_view(request_.argument);
  audit::AuditEvent event =
      MakeEvent(kind, call_.name(), target.substr(0, kAuditTargetChars),
                decision, reason);
  (*event.mutable_fields()->mutable_fields())["call_id"].set_string_value(
      call_.id());
  return c_.audit->Record(event);
}

absl::StatusOr<ToolCallDone> ToolRun::Finish(const std::string& decision,
                                             ToolOutput output,
                                             const std::string& outcome,
                                             ShownOutput shown) {
  // A command's output or a file may hold bytes that are not UTF-8;
  // protobuf's strings (the journal, the reports) and the providers take
  // only UTF-8, so they are replaced by U+FFFD here, once, for every tool.
  done_.result.set_content(provider::ValidUtf8(output.content));
  done_.result.set_is_error(output.is_error);
  done_.report.set_decision(decision);
  done_.report.set_outcome(outcome);
  done_.report.set_is_error(output.is_error);
  ToolOutcomeView view{call_.id(), call_.name(), outcome, output.is_error};
  if (row_ != nullptr && row_->spec.result == ResultShown::kOutputTail) {
    view.output = std::move(shown.output);
    view.stopped = shown.stopped;
  }
  c_.interaction->ShowToolOutcome(view);
  return std::move(done_);
}

absl::StatusOr<ToolCallDone> ToolRun::Refused(const std::string& decision,
                                              const std::string& text) {
  ToolOutput output;
  output.content = text;
  output.is_error = true;
  return Finish(decision, output, text);
}

absl::StatusOr<std::optional<std::string>> ToolRun::Decide(
    bool ask_by_default, const std::string& question, const std::string& detail,
    const char* helper, const ChangeSet* edit) {
  Decided decided =
      CallDecision(c_, call_.name(), request_)
          .Decide({ask_by_default, question, detail, helper, edit});
  relayed_ = std::move(decided.relayed);
  RETURN_IF_ERROR(Audit("tool_call", decided.verdict, decided.text));
  if (!decided.allowed()) {
    ASSIGN_OR_RETURN(done_, Refused(decided.text, decided.for_model));
    return std::optional<std::string>();
  }
  return std::optional<std::string>(decided.text);
}

audit::AuditEvent MakeEvent(absl::string_view kind, absl::string_view tool,
                            absl::string_view target,
                            absl::string_view decision,
                            absl::string_view reason) {
  audit::AuditEvent event;
  event.set_kind(std::string(kind));
  event.set_tool(std::string(tool));
  event.set_target(std::string(target));
  event.set_decision(std::string(decision));
  event.set_reason(std::string(reason));
  return event;
}

absl::StatusOr<ToolCallDone> RunToolCall(const ToolContext& context,
                                         const provider::ToolCall& call) {
  return ToolRun(context, call).Run();
}

}  // namespace agent
}  // namespace garuda
