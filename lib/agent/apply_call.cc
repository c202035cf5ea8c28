#include "lib/agent/apply_call.h"

#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/status_macros.h"
#include "lib/tools/result.h"

namespace garuda {
namespace agent {
namespace {

const char* ApplyKindName(applier::ApplyOutcome::Kind kind) {
  switch (kind) {
    case applier::ApplyOutcome::APPLIED:
      return "applied";
    case applier::ApplyOutcome::NO_CHANGES:
      return "no_changes";
    case applier::ApplyOutcome::CONFLICT:
      return "conflict";
    case applier::ApplyOutcome::REFUSED:
      return "refused";
    case applier::ApplyOutcome::DECLINED:
      return "declined";
    default:
      return "apply_unknown";
  }
}

// "Edit", "Write": how the question starts.
std::string Verb(const ToolRun& run) {
  const RuleName* rule = FindRuleName(run.request().tool);
  return rule != nullptr ? rule->verb : run.call().name();
}

// The change list of an edit whose target no deny rule covers; or the
// call's result when it cannot be made, or when the call is refused before
// it.
absl::StatusOr<std::variant<ProposedEdit, ToolCallDone>> Propose(
    ToolRun& run, const EditToolSpec& tool) {
  const ToolContext& c = run.context();
  // A job's scope comes before every rule: an allow rule cannot widen it.
  if (c.check_write) {
    absl::Status in_scope = c.check_write(run.request().argument);
    if (!in_scope.ok()) {
      std::string text = absl::StrCat("denied: ", in_scope.message());
      RETURN_IF_ERROR(run.Audit("tool_call", "deny", text));
      return run.Refused(text, absl::StrCat("Denied: ", text));
    }
  }
  // A deny rule stops the call before the file is even read (Decide then
  // refuses it with the rule's words).
  if (c.permissions->Decide(run.request()).verdict == Verdict::kDeny) {
    return ProposedEdit();
  }
  absl::StatusOr<ProposedEdit> proposed = tool.propose(*c.project, run.input());
  if (!proposed.ok()) {
    RETURN_IF_ERROR(run.Audit("tool_call", "invalid",
                              std::string(proposed.status().message())));
    return run.Finish(
        "input check failed", ErrorOutput(proposed.status()),
        absl::StrCat("not applied: ", proposed.status().message()));
  }
  return *std::move(proposed);
}

}  // namespace

absl::StatusOr<applier::ApplyOutcome> ApplyThroughApplier(
    const ToolContext& context, const ProposedChange& change) {
  context.interaction->HandOverTerminal();
  absl::StatusOr<applier::ApplyOutcome> applied =
      context.applier->Apply(change);
  context.interaction->TakeBackTerminal();
  return applied;
}

absl::Status AuditApplyFailure(ToolRun& run, const absl::Status& failure) {
  if (IsFatal(failure)) return failure;
  return run.Audit("apply", "failed", std::string(failure.message()));
}

absl::Status AuditApply(ToolRun& run, const applier::ApplyOutcome& outcome) {
  std::string reason = outcome.line();
  if (!outcome.conflicts().empty()) {
    absl::StrAppend(&reason, " [", absl::StrJoin(outcome.conflicts(), ", "),
                    "]");
  }
  return run.Audit(ApplyKindName(outcome.kind()), ApplyKindName(outcome.kind()),
                   reason);
}

absl::StatusOr<ToolCallDone> RunEditCall(ToolRun& run,
                                         const EditToolSpec& tool) {
  const ToolContext& c = run.context();
  ASSIGN_OR_RETURN(auto proposal, Propose(run, tool));
  if (ToolCallDone* done = std::get_if<ToolCallDone>(&proposal)) {
    return std::move(*done);
  }
  ProposedEdit* proposed = &std::get<ProposedEdit>(proposal);
  ASSIGN_OR_RETURN(
      std::optional<std::string> decision,
      run.Decide(true, absl::StrCat(Verb(run), " ", run.request().argument),
                 proposed->question_text, kApplierProgram,
                 &proposed->change_set));
  if (!decision) return run.TakeDone();
  ProposedChange change;
  change.origin = ProposedChange::Origin::kEdit;
  change.tool = run.call().name();
  change.reason = run.summary();
  change.session_id = c.session_id;
  change.change_set = &proposed->change_set;
  change.relayed = run.relayed();
  absl::StatusOr<applier::ApplyOutcome> applied =
      ApplyThroughApplier(c, change);
  if (!applied.ok()) {
    RETURN_IF_ERROR(AuditApplyFailure(run, applied.status()));
    return run.Finish(*decision, ErrorOutput(applied.status()), "not applied");
  }
  if (applied->kind() == applier::ApplyOutcome::DECLINED) {
    RETURN_IF_ERROR(run.Audit("consent", "deny", applied->decision()));
    return run.Refused(applied->decision(), applied->line());
  }
  if (!applied->decision().empty()) {
    decision = applied->decision();
    RETURN_IF_ERROR(run.Audit("consent", "allow", *decision));
  }
  RETURN_IF_ERROR(AuditApply(run, *applied));
  ToolOutput output;
  output.is_error = applied->kind() != applier::ApplyOutcome::APPLIED &&
                    applied->kind() != applier::ApplyOutcome::NO_CHANGES;
  std::string line = applied->line();
  if (line.empty()) {
    line = applied->kind() == applier::ApplyOutcome::APPLIED
               ? absl::StrCat("Edited ", proposed->relative)
               : "Not applied";
  }
  if (applied->kind() == applier::ApplyOutcome::CONFLICT &&
      line.find("Conflict") == std::string::npos) {
    line = absl::StrCat("Conflict: ", line);
  }
  output.content = CapToolResult(line);
  return run.Finish(*decision, std::move(output), line);
}

}  // namespace agent
}  // namespace garuda
