#include "lib/agent/command_tool.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/agent/apply_call.h"
#include "lib/agent/call_decision.h"
#include "lib/agent/command_progress.h"
#include "lib/agent/kept_changes.h"
#include "lib/agent/tool_display.h"
#include "lib/base/status_macros.h"
#include "lib/netproxy/session_proxy.h"
#include "lib/question/question.h"
#include "lib/tools/builtin_tools.h"
#include "lib/tools/result.h"

namespace garuda {
namespace agent {
namespace {

constexpr char kStoppedLine[] =
    "the command was stopped: it and everything it started were ended";
constexpr char kStoppedForModel[] =
    "The command was stopped by the person (Ctrl-C) before it ended.";

// A command through the stager, watched: its progress shown as it runs,
// stopped by the turn's cancel. The helper may ask the person on the
// terminal first (on_host): the terminal is handed over for the call.
absl::StatusOr<CommandService::Ran> RunWatched(
    const ToolContext& context, const stager::RunCommand& command) {
  CommandProgressView progress(context.interaction);
  if (command.on_host()) context.interaction->HandOverTerminal();
  absl::StatusOr<CommandService::Ran> ran =
      context.stager->RunWatched(command, progress.Watch(context.cancel));
  if (command.on_host()) context.interaction->TakeBackTerminal();
  return ran;
}

// One event per host the proxy refused (and allowed ones, which the
// stager reports only with sandbox.auditAllowedHosts); docs/network.md.
absl::Status AuditNetwork(ToolRun& run, const stager::CommandResult& result) {
  for (const proxy::NetworkEvent& event : result.network_events()) {
    RETURN_IF_ERROR(run.Audit(
        "network", event.allowed() ? "allow" : "deny",
        absl::StrCat(event.host(), ":", event.port(),
                     event.allowed() ? "" : absl::StrCat(": ", event.why()),
                     " (", event.count(), "x)")));
  }
  return absl::OkStatus();
}

// No person could answer (one-shot, no allow rule, no --apply-staged):
// the stager's list is kept in the session folder for a person's review.
absl::StatusOr<ChangeOutcome> KeepForReview(ToolRun& run,
                                            CommandService::Ran& ran,
                                            const ChangeSet& change_set,
                                            const Rendered& rendered) {
  const ToolContext& c = run.context();
  c.interaction->ShowNotice(
      "The command changed files; with no person to ask, nothing was "
      "applied.");
  if (c.session_dir.empty() || ran.sealed_change_set.get() < 0) {
    RETURN_IF_ERROR(run.Audit("discard", "discard", rendered.summary));
    return ChangeOutcome{
        absl::StrCat(kDiscardedLine,
                     " (no person could answer the question, so the "
                     "answer was no)"),
        false};
  }
  absl::StatusOr<std::string> kept =
      KeepChangeSet(c.session_dir, ran.sealed_change_set.get());
  if (!kept.ok()) {
    RETURN_IF_ERROR(
        run.Audit("keep", "failed", std::string(kept.status().message())));
    RETURN_IF_ERROR(run.Audit("discard", "discard", rendered.summary));
    return ChangeOutcome{
        absl::StrCat(kDiscardedLine,
                     " (no person could answer the question; the change "
                     "list could not be kept for review: ",
                     kept.status().message(), ")"),
        false};
  }
  RETURN_IF_ERROR(
      run.Audit("keep", "kept", absl::StrCat(*kept, "\n", rendered.summary)));
  KeptChangeSet* report = run.report().mutable_kept_changes();
  report->set_path(*kept);
  report->set_summary(rendered.summary);
  report->set_files(static_cast<uint32_t>(change_set.changes.size()));
  report->set_call_id(run.call().id());
  c.interaction->ShowNotice(absl::StrCat("Kept for review: ", *kept));
  return ChangeOutcome{KeptLine(*kept, c.project->root()), false};
}

}  // namespace

const std::string& CommandToolName() { return Builtins().command.name; }

absl::StatusOr<ChangeOutcome> SettleChangeSet(ToolRun& run,
                                              CommandService::Ran& ran,
                                              const std::string& reason) {
  const ToolContext& c = run.context();
  const ChangeSet& change_set = *ran.change_set;
  const bool person = c.interaction->CanAsk();
  ProposedChange change;
  change.origin = ProposedChange::Origin::kCommand;
  change.reason = reason;
  change.session_id = c.session_id;
  change.change_set = &change_set;
  change.sealed_fd = ran.sealed_change_set.get();
  if (c.interaction->RelaysAnswers()) {
    // The T5 question, asked by the agent for the editor (see Decide).
    Answer answer = c.interaction->AskChangeSet(
        change_set, RenderChangeSet(change_set, c.project->fd()));
    change.relayed = RelayedYes(answer == Answer::kApply, "acp");
  }
  absl::StatusOr<applier::ApplyOutcome> applied =
      ApplyThroughApplier(c, change);
  if (!applied.ok()) {
    RETURN_IF_ERROR(AuditApplyFailure(run, applied.status()));
    return ChangeOutcome{absl::StrCat("The changes were not applied: ",
                                      applied.status().message()),
                         true};
  }
  if (applied->kind() == applier::ApplyOutcome::DECLINED) {
    RETURN_IF_ERROR(run.Audit("question", "discard", applied->decision()));
    Rendered rendered = RenderChangeSet(change_set, c.project->fd());
    // Kept, not discarded: the audit log's "keep" event names the file.
    if (!person && applied->no_person()) {
      return KeepForReview(run, ran, change_set, rendered);
    }
    RETURN_IF_ERROR(run.Audit("discard", "discard", rendered.summary));
    if (!person) {
      // A rule said no (a deny rule, an incomplete list): the applier's
      // line says which.
      c.interaction->ShowNotice(
          "The command changed files; the changes are discarded.");
      return ChangeOutcome{
          applied->line().empty() ? kDiscardedLine : applied->line(), false};
    }
    return ChangeOutcome{
        applied->line().empty() ? kDiscardedLine : applied->line(), false};
  }
  // Applied by the applier's own --apply-staged, not by a person: the
  // audit log says so by its decision.
  RETURN_IF_ERROR(run.Audit(
      "question", applied->by_apply_staged() ? "apply_staged" : "apply",
      applied->decision()));
  RETURN_IF_ERROR(AuditApply(run, *applied));
  if (applied->by_apply_staged())
    run.report().set_applied_by_apply_staged(true);
  ChangeOutcome outcome;
  outcome.line = applied->line();
  if (outcome.line.empty()) {
    outcome.line = applied->kind() == applier::ApplyOutcome::APPLIED
                       ? kAppliedLine
                       : "The changes were not applied";
  }
  outcome.is_error = applied->kind() == applier::ApplyOutcome::CONFLICT ||
                     applied->kind() == applier::ApplyOutcome::REFUSED;
  return outcome;
}

absl::StatusOr<ToolCallDone> RunCommandCall(ToolRun& run) {
  const ToolContext& c = run.context();
  const std::optional<BashInput> input = BashInputOf(run.input());
  const bool on_host = input->outside_sandbox || !c.sandboxed;
  if (on_host && !c.host_refusal.empty()) {
    std::string text = absl::StrCat("denied: ", c.host_refusal);
    RETURN_IF_ERROR(run.Audit("tool_call", "deny", text));
    return run.Refused(text, absl::StrCat("Denied: ", text, "."));
  }
  if (on_host && c.require_sandbox) {
    std::string text =
        "denied: the settings require the OS sandbox (requireSandbox), "
        "and this command would run on the host";
    RETURN_IF_ERROR(run.Audit("tool_call", "deny", text));
    return run.Refused(text, absl::StrCat("Denied: ", text, "."));
  }
  std::string why;
  if (input->outside_sandbox) {
    why = "The model asked to run this outside the sandbox.";
  } else if (!c.sandboxed) {
    why =
        "This machine has no working OS sandbox: the command would run "
        "on the host with your rights.";
  }
  ASSIGN_OR_RETURN(
      std::optional<std::string> decision,
      run.Decide(
          on_host,
          absl::StrCat(on_host ? "Run on the host: " : "Run: ", input->command),
          why, on_host ? kStagerProgram : nullptr));
  if (!decision) return run.TakeDone();
  if (on_host && !c.sandboxed && !input->outside_sandbox) {
    RETURN_IF_ERROR(run.Audit("host_fallback", "allow",
                              "no OS sandbox: the command runs on the host"));
  }
  stager::RunCommand command;
  command.set_command(input->command);
  if (input->timeout_seconds) {
    command.set_timeout_seconds(
        static_cast<uint32_t>(std::max<int64_t>(0, *input->timeout_seconds)));
  }
  command.set_on_host(on_host);
  command.set_on_host_reason(why);
  command.set_call_id(run.call().id());
  if (run.relayed()) *command.mutable_relayed_answer() = *run.relayed();
  absl::StatusOr<CommandService::Ran> ran = RunWatched(c, command);
  if (!ran.ok()) {
    if (IsFatal(ran.status())) return ran.status();
    if (on_host && absl::IsPermissionDenied(ran.status())) {
      // The stager's own answer: it did not agree to run it on the host.
      std::string text(ran.status().message());
      RETURN_IF_ERROR(run.Audit("consent", "deny", text));
      return run.Refused(text, absl::StrCat("Not run: ", text, "."));
    }
    RETURN_IF_ERROR(
        run.Audit("command", "failed", std::string(ran.status().message())));
    return run.Finish(*decision, ErrorOutput(ran.status()), "could not run");
  }
  if (on_host && !ran->result.consent().empty()) {
    decision = ran->result.consent();
    RETURN_IF_ERROR(run.Audit("consent", "allow", *decision));
  }
  RETURN_IF_ERROR(run.Audit("command", on_host ? "host" : "sandbox",
                            ran->result.description()));
  RETURN_IF_ERROR(AuditNetwork(run, ran->result));
  std::string text = FormatCommandResult(ran->result);
  std::string outcome = ran->result.description();
  const bool stopped = ran->result.kind() == stager::CommandResult::STOPPED;
  ShownOutput shown{CommandOutputForPerson(ran->result), stopped};
  if (stopped) outcome = kStoppedLine;
  bool is_error = false;
  if (ran->change_set) {
    ASSIGN_OR_RETURN(
        ChangeOutcome settled,
        SettleChangeSet(run, *ran,
                        absl::StrCat(run.call().name(), ": ", input->command)));
    absl::StrAppend(&text, "\n", settled.line);
    outcome = settled.line;
    is_error = settled.is_error;
  }
  ToolOutput output;
  output.content = CapToolResult(text);
  output.is_error = is_error;
  absl::StatusOr<ToolCallDone> done =
      run.Finish(*decision, std::move(output), outcome, std::move(shown));
  // The person reads the same lines as the model, after the output.
  for (const std::string& line :
       netproxy::RefusalLines(ran->result.network_events())) {
    c.interaction->ShowNotice(line);
  }
  return done;
}

std::string FormatCommandResult(const stager::CommandResult& result) {
  std::string text = result.description();
  if (text.empty()) text = absl::StrCat("exit code ", result.exit_code());
  if (result.on_host()) absl::StrAppend(&text, " (ran on the host)");
  absl::StrAppend(&text, "\n", CapturedOutput(result, /*headers=*/true));
  if (result.kind() == stager::CommandResult::STOPPED) {
    absl::StrAppend(&text, kStoppedForModel, "\n");
  }
  // After the output: each host the allow list's proxy refused.
  for (const std::string& line :
       netproxy::RefusalLines(result.network_events())) {
    absl::StrAppend(&text, line, "\n");
  }
  return text;
}

absl::StatusOr<std::string> RunPersonCommand(const ToolContext& context,
                                             const std::string& command) {
  provider::ToolCall call;
  call.set_id("person");
  call.set_name(CommandToolName());
  call.set_arguments_json(command);  // the audit events' target
  ToolRun settle(context, call);
  // Strict: the sandbox only. Otherwise the person's own command runs on
  // the host, as if typed in their shell; the sandbox has no say.
  const bool on_host =
      context.profile != ToolProfile::kStrict && !context.require_sandbox;
  RETURN_IF_ERROR(context.audit->Record(MakeEvent(
      "person_command", CommandToolName(), command,
      on_host ? "host" : "sandbox", "typed by the person (!command)")));
  stager::RunCommand run;
  run.set_command(command);
  run.set_on_host(on_host);
  // The stager asks the person itself before it runs anything on the
  // host: that the person typed it is the agent's word only.
  if (on_host) run.set_on_host_reason("you typed it at the prompt (!command)");
  run.set_call_id("person");
  absl::StatusOr<CommandService::Ran> ran = RunWatched(context, run);
  if (!ran.ok()) {
    if (IsFatal(ran.status())) return ran.status();
    return absl::StrCat("The command could not run: ", ran.status().message());
  }
  std::string text = FormatCommandResult(ran->result);
  for (const proxy::NetworkEvent& event : ran->result.network_events()) {
    RETURN_IF_ERROR(context.audit->Record(MakeEvent(
        "network", CommandToolName(), command,
        event.allowed() ? "allow" : "deny",
        absl::StrCat(event.host(), ":", event.port(),
                     event.allowed() ? "" : absl::StrCat(": ", event.why()),
                     " (", event.count(), "x)"))));
  }
  if (ran->change_set) {
    ASSIGN_OR_RETURN(ChangeOutcome outcome,
                     SettleChangeSet(settle, *ran, absl::StrCat("!", command)));
    absl::StrAppend(&text, outcome.line, "\n");
  }
  return CapToolResult(text);
}

}  // namespace agent
}  // namespace garuda
