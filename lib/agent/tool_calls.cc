#include "lib/agent/tool_calls.h"

#include "lib/netproxy/session_proxy.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/agent/command_progress.h"
#include "lib/agent/kept_changes.h"
#include "lib/agent/tool_display.h"
#include "lib/base/status_macros.h"
#include "lib/provider/json.h"
#include "lib/question/question.h"
#include "lib/tools/code_tools.h"
#include "lib/tools/edit_tools.h"
#include "lib/tools/result.h"
#include "lib/tools/run.h"

namespace garuda {
namespace agent {
namespace {

// The helpers that decide themselves what they do (lib/consent).
constexpr char kStagerProgram[] = "garuda-stager";
constexpr char kApplierProgram[] = "garuda-applier";
constexpr size_t kAuditTargetChars = 4096;

constexpr char kNoPersonText[] =
    "Not run: no person can answer questions in this session, so the "
    "answer is no. An allow rule in the settings (permissions.allow) can "
    "permit such calls.";
constexpr char kDeniedByPersonText[] = "The user said no to this call.";

constexpr char kStoppedLine[] =
    "the command was stopped: it and everything it started were ended";
constexpr char kStoppedForModel[] =
    "The command was stopped by the person (Ctrl-C) before it ended.";

// The outcome line of a call whose input was refused, with the reason.
std::string InputRefused(const absl::Status& status) {
  return absl::StrCat("the call's input was refused: ", status.message());
}

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

// A helper that is gone, or that broke its channel: the session stops.
bool IsFatal(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDataLoss(status);
}

RelayedAnswer RelayedYes(bool yes, const std::string& from) {
  RelayedAnswer answer;
  answer.set_from(from);
  answer.set_yes(yes);
  return answer;
}

// Allowed only thanks to a session answer ("... from this session").
bool AllowedForSession(const Decision& decision) {
  for (const std::string& rule : decision.allowed_by) {
    if (absl::StrContains(rule, "this session")) return true;
  }
  return false;
}

class Call {
 public:
  Call(const ToolContext& context, const provider::ToolCall& call)
      : c_(context), call_(call) {
    done_.result.set_tool_call_id(call.id());
    done_.report.set_id(call.id());
    done_.report.set_tool(call.name());
    done_.report.set_arguments_json(call.arguments_json());
  }

  absl::StatusOr<ToolCallDone> Run() {
    absl::StatusOr<PermissionRequest> request = PermissionRequestFor(
        *c_.project, call_.name(), call_.arguments_json(), c_.profile);
    summary_ = ToolCallSummary(call_.name(), call_.arguments_json(),
                               request.ok() ? request->argument : "");
    c_.interaction->ShowToolCall({call_.id(), call_.name(), summary_});
    if (!request.ok()) {
      RETURN_IF_ERROR(Audit("tool_call", "invalid",
                            std::string(request.status().message())));
      return Finish("input check failed", ErrorOutput(request.status()),
                    InputRefused(request.status()));
    }
    request_ = *std::move(request);
    if (call_.name() == "bash") return Bash();
    if (IsEditTool(call_.name())) return Edit();
    if (IsCodeTool(call_.name())) return Code();
    return ReadOnly();
  }

 private:
  absl::Status Audit(absl::string_view kind, absl::string_view decision,
                     absl::string_view reason) {
    // The target is the command or path; for a call whose input failed
    // its check, the start of its arguments (a write_file's content can be
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

  // One event per host the proxy refused (and allowed ones, which the
  // stager reports only with sandbox.auditAllowedHosts); docs/network.md.
  absl::Status AuditNetwork(const stager::CommandResult& result) {
    for (const proxy::NetworkEvent& event : result.network_events()) {
      RETURN_IF_ERROR(Audit(
          "network", event.allowed() ? "allow" : "deny",
          absl::StrCat(event.host(), ":", event.port(),
                       event.allowed() ? "" : absl::StrCat(": ", event.why()),
                       " (", event.count(), "x)")));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<ToolCallDone> Finish(const std::string& decision,
                                      ToolOutput output,
                                      const std::string& outcome) {
    // A command's output or a file may hold bytes that are not UTF-8;
    // protobuf's strings (the journal, the reports) and the providers take
    // only UTF-8, so they are replaced by U+FFFD here, once, for every tool.
    done_.result.set_content(provider::ValidUtf8(output.content));
    done_.result.set_is_error(output.is_error);
    done_.report.set_decision(decision);
    done_.report.set_outcome(outcome);
    done_.report.set_is_error(output.is_error);
    ToolOutcomeView view{call_.id(), call_.name(), outcome, output.is_error};
    view.output = std::move(shown_output_);
    view.stopped = stopped_;
    c_.interaction->ShowToolOutcome(view);
    return std::move(done_);
  }

  absl::StatusOr<ToolCallDone> Refused(const std::string& decision,
                                       const std::string& text) {
    ToolOutput output;
    output.content = text;
    output.is_error = true;
    return Finish(decision, output, text);
  }

  // Decides; asks when needed. Returns the decision text when the call may
  // run, or nullopt with the model's result already set (denied). With a
  // `helper` (the program that will act), a call that would ask is only
  // proposed: that helper asks the person itself, and its answer is the
  // one that counts. The agent's own refusals (a deny rule, nobody to ask)
  // still stop the call here: refusing needs no one's trust.
  absl::StatusOr<std::optional<std::string>> Decide(
      bool ask_by_default, const std::string& question,
      const std::string& detail, const char* helper = nullptr) {
    Decision decision = c_.permissions->Decide(request_);
    if (decision.verdict == Verdict::kDeny) {
      std::string text = absl::StrCat("denied by ", decision.reason);
      RETURN_IF_ERROR(Audit("tool_call", "deny", text));
      ASSIGN_OR_RETURN(done_, Refused(text, absl::StrCat("Denied: ", text)));
      return std::optional<std::string>();
    }
    bool ask = decision.verdict == Verdict::kAsk ||
               (ask_by_default && decision.verdict != Verdict::kAllow);
    if (!ask) {
      std::string text =
          decision.verdict == Verdict::kAllow
              ? absl::StrCat("allowed by ",
                             decision.allowed_by.empty()
                                 ? decision.reason
                                 : absl::StrJoin(decision.allowed_by, ", "))
              : "allowed: no rule asks";
      // An editor's "allow always" is remembered here, so the helper, which
      // cannot ask, gets it relayed each time (marked as a session answer).
      if (helper != nullptr && c_.interaction->RelaysAnswers() &&
          AllowedForSession(decision)) {
        relayed_ = RelayedYes(true, "acp (allowed for this session)");
      }
      RETURN_IF_ERROR(Audit("tool_call", "allow", text));
      return std::optional<std::string>(text);
    }
    std::string why =
        decision.verdict == Verdict::kAsk && !decision.reason.empty()
            ? decision.reason
            : detail;
    if (!c_.interaction->CanAsk()) {
      std::string text = "no person to ask: no";
      RETURN_IF_ERROR(Audit("tool_call", "deny", text));
      ASSIGN_OR_RETURN(done_, Refused(text, kNoPersonText));
      return std::optional<std::string>();
    }
    const bool relay = helper != nullptr && c_.interaction->RelaysAnswers();
    if (helper != nullptr && !relay) {
      std::string text = absl::StrCat("proposed: ", helper, " asks the person");
      RETURN_IF_ERROR(Audit("tool_call", "propose", text));
      return std::optional<std::string>(text);
    }
    PermissionQuestion q;
    q.tool = call_.name();
    q.summary = question;
    q.detail = why;
    q.session_rule = Permissions::SessionRuleFor(request_);
    PermissionAnswer answer =
        relay && IsEditTool(call_.name()) &&
                !proposed_.change_set.changes.empty()
            ? c_.interaction->AskEdit(q, proposed_.change_set)
            : c_.interaction->AskPermission(q);
    if (relay) relayed_ = RelayedYes(answer != PermissionAnswer::kNo, "acp");
    if (answer == PermissionAnswer::kNo) {
      RETURN_IF_ERROR(Audit("tool_call", "deny", "asked: no"));
      ASSIGN_OR_RETURN(done_, Refused("asked: no", kDeniedByPersonText));
      return std::optional<std::string>();
    }
    std::string text = "asked: yes";
    if (answer == PermissionAnswer::kYesForSession && q.session_rule) {
      absl::Status remembered =
          c_.permissions->RememberForSession(*q.session_rule);
      if (remembered.ok()) {
        text =
            absl::StrCat("asked: yes, and for this session: ", *q.session_rule);
      }
    }
    RETURN_IF_ERROR(Audit("tool_call", "allow", text));
    return std::optional<std::string>(text);
  }

  absl::StatusOr<ToolCallDone> ReadOnly() {
    ASSIGN_OR_RETURN(std::optional<std::string> decision,
                     Decide(false, absl::StrCat("Read: ", summary_), ""));
    if (!decision) return std::move(done_);
    ToolOutput output = RunReadOnlyTool(*c_.project, call_.name(),
                                        call_.arguments_json(), c_.permissions);
    std::string outcome =
        output.is_error ? "failed"
                        : absl::StrCat(output.content.size(), " characters");
    return Finish(*decision, std::move(output), outcome);
  }

  // The code tools read like read_file and are decided as it is; their
  // answer leaves out files a read rule denies.
  absl::StatusOr<ToolCallDone> Code() {
    ASSIGN_OR_RETURN(std::optional<std::string> decision,
                     Decide(false, absl::StrCat("Read: ", summary_), ""));
    if (!decision) return std::move(done_);
    absl::StatusOr<CodeToolInput> input =
        ParseCodeToolInput(call_.name(), call_.arguments_json());
    if (!input.ok()) {
      return Finish(*decision, ErrorOutput(input.status()),
                    InputRefused(input.status()));
    }
    if (c_.code == nullptr) {
      return Finish(*decision,
                    ErrorOutput(absl::FailedPreconditionError(
                        "the code tools are not available in this session")),
                    "not available");
    }
    const Permissions* permissions = c_.permissions;
    std::string tool = call_.name();
    HiddenPredicate hidden = [permissions, tool](const std::string& path) {
      return permissions->Decide({"read_file", path}).verdict ==
                 Verdict::kDeny ||
             permissions->Decide({tool, path}).verdict == Verdict::kDeny;
    };
    CodeToolOutcome answered =
        RunCodeTool(*c_.project, *c_.code, *input, hidden);
    return Finish(*decision, std::move(answered.output), answered.screen);
  }

  absl::StatusOr<ToolCallDone> Bash() {
    absl::StatusOr<BashInput> input =
        ParseBashInput(call_.arguments_json(), c_.profile);
    if (!input.ok()) {
      RETURN_IF_ERROR(
          Audit("tool_call", "invalid", std::string(input.status().message())));
      return Finish("input check failed", ErrorOutput(input.status()),
                    InputRefused(input.status()));
    }
    const bool on_host = input->outside_sandbox || !c_.sandboxed;
    if (on_host && !c_.host_refusal.empty()) {
      std::string text = absl::StrCat("denied: ", c_.host_refusal);
      RETURN_IF_ERROR(Audit("tool_call", "deny", text));
      return Refused(text, absl::StrCat("Denied: ", text, "."));
    }
    if (on_host && c_.require_sandbox) {
      std::string text =
          "denied: the settings require the OS sandbox (requireSandbox), "
          "and this command would run on the host";
      RETURN_IF_ERROR(Audit("tool_call", "deny", text));
      return Refused(text, absl::StrCat("Denied: ", text, "."));
    }
    std::string why;
    if (input->outside_sandbox) {
      why = "The model asked to run this outside the sandbox.";
    } else if (!c_.sandboxed) {
      why =
          "This machine has no working OS sandbox: the command would run "
          "on the host with your rights.";
    }
    ASSIGN_OR_RETURN(
        std::optional<std::string> decision,
        Decide(on_host,
               absl::StrCat(on_host ? "Run on the host: " : "Run: ",
                            input->command),
               why, on_host ? kStagerProgram : nullptr));
    if (!decision) return std::move(done_);
    if (on_host && !c_.sandboxed && !input->outside_sandbox) {
      RETURN_IF_ERROR(Audit("host_fallback", "allow",
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
    command.set_call_id(call_.id());
    if (relayed_) *command.mutable_relayed_answer() = *relayed_;
    absl::StatusOr<CommandService::Ran> ran = RunThroughStager(command);
    if (!ran.ok()) {
      if (IsFatal(ran.status())) return ran.status();
      if (on_host && absl::IsPermissionDenied(ran.status())) {
        // The stager's own answer: it did not agree to run it on the host.
        std::string text(ran.status().message());
        RETURN_IF_ERROR(Audit("consent", "deny", text));
        return Refused(text, absl::StrCat("Not run: ", text, "."));
      }
      RETURN_IF_ERROR(
          Audit("command", "failed", std::string(ran.status().message())));
      return Finish(*decision, ErrorOutput(ran.status()), "could not run");
    }
    if (on_host && !ran->result.consent().empty()) {
      decision = ran->result.consent();
      RETURN_IF_ERROR(Audit("consent", "allow", *decision));
    }
    RETURN_IF_ERROR(Audit("command", on_host ? "host" : "sandbox",
                          ran->result.description()));
    RETURN_IF_ERROR(AuditNetwork(ran->result));
    std::string text = FormatCommandResult(ran->result);
    std::string outcome = ran->result.description();
    shown_output_ = CommandOutputForPerson(ran->result);
    stopped_ = ran->result.kind() == stager::CommandResult::STOPPED;
    if (stopped_) outcome = kStoppedLine;
    bool is_error = false;
    if (ran->change_set) {
      ASSIGN_OR_RETURN(
          ChangeOutcome settled,
          SettleChangeSet(*ran, absl::StrCat("bash: ", input->command)));
      absl::StrAppend(&text, "\n", settled.line);
      outcome = settled.line;
      is_error = settled.is_error;
    }
    ToolOutput output;
    output.content = CapToolResult(text);
    output.is_error = is_error;
    absl::StatusOr<ToolCallDone> done =
        Finish(*decision, std::move(output), outcome);
    // The person reads the same lines as the model, after the output.
    for (const std::string& line :
         netproxy::RefusalLines(ran->result.network_events())) {
      c_.interaction->ShowNotice(line);
    }
    return done;
  }

  absl::StatusOr<ToolCallDone> Edit() {
    ASSIGN_OR_RETURN(std::optional<std::string> decision, DecideEdit());
    if (!decision) return std::move(done_);
    ProposedChange change;
    change.origin = ProposedChange::Origin::kEdit;
    change.tool = call_.name();
    change.reason = summary_;
    change.session_id = c_.session_id;
    change.change_set = &proposed_.change_set;
    change.relayed = relayed_;
    absl::StatusOr<applier::ApplyOutcome> applied = ApplyThroughApplier(change);
    if (!applied.ok()) {
      if (IsFatal(applied.status())) return applied.status();
      RETURN_IF_ERROR(
          Audit("apply", "failed", std::string(applied.status().message())));
      return Finish(*decision, ErrorOutput(applied.status()), "not applied");
    }
    if (applied->kind() == applier::ApplyOutcome::DECLINED) {
      RETURN_IF_ERROR(Audit("consent", "deny", applied->decision()));
      return Refused(applied->decision(), applied->line());
    }
    if (!applied->decision().empty()) {
      decision = applied->decision();
      RETURN_IF_ERROR(Audit("consent", "allow", *decision));
    }
    RETURN_IF_ERROR(AuditApply(*applied));
    ToolOutput output;
    output.is_error = applied->kind() != applier::ApplyOutcome::APPLIED &&
                      applied->kind() != applier::ApplyOutcome::NO_CHANGES;
    std::string line = applied->line();
    if (line.empty()) {
      line = applied->kind() == applier::ApplyOutcome::APPLIED
                 ? absl::StrCat("Edited ", proposed_.relative)
                 : "Not applied";
    }
    if (applied->kind() == applier::ApplyOutcome::CONFLICT &&
        line.find("Conflict") == std::string::npos) {
      line = absl::StrCat("Conflict: ", line);
    }
    output.content = CapToolResult(line);
    return Finish(*decision, std::move(output), line);
  }

  absl::StatusOr<std::optional<std::string>> DecideEdit() {
    // A job's scope comes before every rule: an allow rule cannot widen it.
    if (c_.check_write) {
      absl::Status in_scope = c_.check_write(request_.argument);
      if (!in_scope.ok()) {
        std::string text = absl::StrCat("denied: ", in_scope.message());
        RETURN_IF_ERROR(Audit("tool_call", "deny", text));
        ASSIGN_OR_RETURN(done_, Refused(text, absl::StrCat("Denied: ", text)));
        return std::optional<std::string>();
      }
    }
    // A deny rule stops the call before the file is even read.
    if (c_.permissions->Decide(request_).verdict != Verdict::kDeny) {
      absl::StatusOr<ProposedEdit> proposed =
          call_.name() == "edit_file" ? [&]() -> absl::StatusOr<ProposedEdit> {
        ASSIGN_OR_RETURN(EditFileInput input,
                         ParseEditFileInput(call_.arguments_json()));
        return ProposeEditFile(*c_.project, input);
      }()
          : [&]() -> absl::StatusOr<ProposedEdit> {
              ASSIGN_OR_RETURN(WriteFileInput input,
                               ParseWriteFileInput(call_.arguments_json()));
              return ProposeWriteFile(*c_.project, input);
            }();
      if (!proposed.ok()) {
        RETURN_IF_ERROR(Audit("tool_call", "invalid",
                              std::string(proposed.status().message())));
        ASSIGN_OR_RETURN(
            done_, Finish("input check failed", ErrorOutput(proposed.status()),
                          absl::StrCat("not applied: ",
                                       proposed.status().message())));
        return std::optional<std::string>();
      }
      proposed_ = *std::move(proposed);
    }
    return Decide(true,
                  absl::StrCat(call_.name() == "edit_file" ? "Edit " : "Write ",
                               request_.argument),
                  proposed_.question_text, kApplierProgram);
  }

  // The helper may ask the person on the terminal during the call: the
  // terminal is handed over for its time.
  absl::StatusOr<CommandService::Ran> RunThroughStager(
      const stager::RunCommand& command) {
    return RunWatched(c_, command);
  }

  absl::StatusOr<applier::ApplyOutcome> ApplyThroughApplier(
      const ProposedChange& change) {
    c_.interaction->HandOverTerminal();
    absl::StatusOr<applier::ApplyOutcome> applied = c_.applier->Apply(change);
    c_.interaction->TakeBackTerminal();
    return applied;
  }

  absl::Status AuditApply(const applier::ApplyOutcome& outcome) {
    std::string reason = outcome.line();
    if (!outcome.conflicts().empty()) {
      absl::StrAppend(&reason, " [", absl::StrJoin(outcome.conflicts(), ", "),
                      "]");
    }
    return Audit(ApplyKindName(outcome.kind()), ApplyKindName(outcome.kind()),
                 reason);
  }

 public:
  struct ChangeOutcome {
    std::string line;
    bool is_error = false;
  };

  // A command's changes go to the applier, which asks the T5 question
  // itself (or, with nobody to ask, re-checks the rules), then applies or
  // discards.
  absl::StatusOr<ChangeOutcome> SettleChangeSet(CommandService::Ran& ran,
                                                const std::string& reason) {
    const ChangeSet& change_set = *ran.change_set;
    const bool person = c_.interaction->CanAsk();
    ProposedChange change;
    change.origin = ProposedChange::Origin::kCommand;
    change.reason = reason;
    change.session_id = c_.session_id;
    change.change_set = &change_set;
    change.sealed_fd = ran.sealed_change_set.get();
    if (c_.interaction->RelaysAnswers()) {
      // The T5 question, asked by the agent for the editor (see Decide).
      Answer answer = c_.interaction->AskChangeSet(
          change_set, RenderChangeSet(change_set, c_.project->fd()));
      change.relayed = RelayedYes(answer == Answer::kApply, "acp");
    }
    absl::StatusOr<applier::ApplyOutcome> applied = ApplyThroughApplier(change);
    if (!applied.ok()) {
      if (IsFatal(applied.status())) return applied.status();
      RETURN_IF_ERROR(
          Audit("apply", "failed", std::string(applied.status().message())));
      return ChangeOutcome{absl::StrCat("The changes were not applied: ",
                                        applied.status().message()),
                           true};
    }
    if (applied->kind() == applier::ApplyOutcome::DECLINED) {
      RETURN_IF_ERROR(Audit("question", "discard", applied->decision()));
      Rendered rendered = RenderChangeSet(change_set, c_.project->fd());
      // Kept, not discarded: the audit log's "keep" event names the file.
      if (!person && applied->no_person()) {
        return KeepForReview(ran, change_set, rendered);
      }
      RETURN_IF_ERROR(Audit("discard", "discard", rendered.summary));
      if (!person) {
        // A rule said no (a deny rule, an incomplete list): the applier's
        // line says which.
        c_.interaction->ShowNotice(
            "The command changed files; the changes are discarded.");
        return ChangeOutcome{
            applied->line().empty() ? kDiscardedLine : applied->line(), false};
      }
      return ChangeOutcome{
          applied->line().empty() ? kDiscardedLine : applied->line(), false};
    }
    // Applied by the applier's own --apply-staged, not by a person: the
    // audit log says so by its decision.
    RETURN_IF_ERROR(Audit("question",
                          applied->by_apply_staged() ? "apply_staged" : "apply",
                          applied->decision()));
    RETURN_IF_ERROR(AuditApply(*applied));
    if (applied->by_apply_staged())
      done_.report.set_applied_by_apply_staged(true);
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

  // No person could answer (one-shot, no allow rule, no --apply-staged):
  // the stager's list is kept in the session folder for a person's review.
  absl::StatusOr<ChangeOutcome> KeepForReview(CommandService::Ran& ran,
                                              const ChangeSet& change_set,
                                              const Rendered& rendered) {
    c_.interaction->ShowNotice(
        "The command changed files; with no person to ask, nothing was "
        "applied.");
    if (c_.session_dir.empty() || ran.sealed_change_set.get() < 0) {
      RETURN_IF_ERROR(Audit("discard", "discard", rendered.summary));
      return ChangeOutcome{
          absl::StrCat(kDiscardedLine,
                       " (no person could answer the question, so the "
                       "answer was no)"),
          false};
    }
    absl::StatusOr<std::string> kept =
        KeepChangeSet(c_.session_dir, ran.sealed_change_set.get());
    if (!kept.ok()) {
      RETURN_IF_ERROR(
          Audit("keep", "failed", std::string(kept.status().message())));
      RETURN_IF_ERROR(Audit("discard", "discard", rendered.summary));
      return ChangeOutcome{
          absl::StrCat(kDiscardedLine,
                       " (no person could answer the question; the change "
                       "list could not be kept for review: ",
                       kept.status().message(), ")"),
          false};
    }
    RETURN_IF_ERROR(Audit("keep", "kept",
                          absl::StrCat(*kept, "\n", rendered.summary)));
    KeptChangeSet* report = done_.report.mutable_kept_changes();
    report->set_path(*kept);
    report->set_summary(rendered.summary);
    report->set_files(static_cast<uint32_t>(change_set.changes.size()));
    report->set_call_id(call_.id());
    c_.interaction->ShowNotice(absl::StrCat("Kept for review: ", *kept));
    return ChangeOutcome{KeptLine(*kept, c_.project->root()), false};
  }

  static const char* ApplyKindName(applier::ApplyOutcome::Kind kind) {
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

 private:
  const ToolContext& c_;
  const provider::ToolCall& call_;
  PermissionRequest request_;
  std::string summary_;
  ProposedEdit proposed_;
  ToolCallDone done_;
  // The editor's answer the helper gets (RelaysAnswers only).
  std::optional<RelayedAnswer> relayed_;
  // A command's output and whether it was stopped, for the person.
  std::string shown_output_;
  bool stopped_ = false;
};

}  // namespace

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

absl::StatusOr<ToolCallDone> RunToolCall(const ToolContext& context,
                                         const provider::ToolCall& call) {
  return Call(context, call).Run();
}

absl::StatusOr<std::string> RunPersonCommand(const ToolContext& context,
                                             const std::string& command) {
  provider::ToolCall call;
  call.set_id("person");
  call.set_name("bash");
  call.set_arguments_json(command);  // the audit events' target
  Call settle(context, call);
  // Strict: the sandbox only. Otherwise the person's own command runs on
  // the host, as if typed in their shell; the sandbox has no say.
  const bool on_host =
      context.profile != ToolProfile::kStrict && !context.require_sandbox;
  RETURN_IF_ERROR(context.audit->Record(
      MakeEvent("person_command", "bash", command, on_host ? "host" : "sandbox",
                "typed by the person (!command)")));
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
        "network", "bash", command, event.allowed() ? "allow" : "deny",
        absl::StrCat(event.host(), ":", event.port(),
                     event.allowed() ? "" : absl::StrCat(": ", event.why()),
                     " (", event.count(), "x)"))));
  }
  if (ran->change_set) {
    ASSIGN_OR_RETURN(Call::ChangeOutcome outcome,
                     settle.SettleChangeSet(*ran, absl::StrCat("!", command)));
    absl::StrAppend(&text, outcome.line, "\n");
  }
  return CapToolResult(text);
}

}  // namespace agent
}  // namespace garuda
