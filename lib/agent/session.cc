#include "lib/agent/session.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/agent/answer_calls.h"
#include "lib/agent/builtin_rows.h"
#include "lib/agent/child_agents.h"
#include "lib/agent/command_tool.h"
#include "lib/agent/system_prompt.h"
#include "lib/agent/tool_calls.h"
#include "lib/agent/turn_loop.h"
#include "lib/agent/usage_meter.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/provider/budget_meter.h"

namespace garuda {
namespace agent {

absl::Status CheckProfile(const SessionConfig& config) {
  if (!config.strict || config.description.sandboxed()) {
    return absl::OkStatus();
  }
  std::string problem = config.description.sandbox_problem();
  if (problem.empty()) problem = "the OS sandbox does not work on this machine";
  return absl::FailedPreconditionError(absl::StrCat(
      "the session did not start: the strict profile",
      config.strict_source.empty()
          ? std::string()
          : absl::StrCat(" (from ", config.strict_source, ")"),
      " runs commands only in the OS sandbox, and this machine has none (",
      problem,
      "). Fix: make the sandbox work (`garuda-stager probe` says what is "
      "missing), or remove \"profile\": \"strict\" from ",
      config.strict_source.empty() ? "the policy file" : config.strict_source,
      " (a project's settings cannot remove it)."));
}

Session::Session(SessionConfig config, SessionParts parts)
    : config_(std::move(config)),
      parts_(parts),
      conversation_(parts.journal),
      locks_(std::make_shared<AgentLocks>()),
      root_interaction_(parts.interaction),
      session_audit_(parts.audit) {
  // The audit channel is shared with the children's threads.
  own_audit_ = std::make_unique<AgentAudit>(parts_.audit, locks_.get(), "");
  parts_.audit = own_audit_.get();
  PromptFacts facts;
  facts.project = parts_.project->root();
  facts.staged = Staged(config_);
  facts.sandboxed = config_.description.sandboxed();
  facts.strict = config_.strict;
  system_prompt_ = SystemPrompt(facts) + config_.instructions_prompt;
  tools_ = BuiltinToolTable(Offers());
  AddMcpRows();
}

void Session::AddMcpRows() {
  if (parts_.mcp == nullptr) return;
  absl::Status added = parts_.mcp->AddRows(tools_);
  if (!added.ok()) parts_.interaction->ShowNotice(added.message());
}

BuiltinOffers Session::Offers() const {
  return {[this] {
            return parts_.code != nullptr && !parts_.code->languages().empty();
          },
          [this] { return depth_ < config_.agents.max_depth; }};
}

bool Staged(const SessionConfig& config) {
  return config.description.mode() == "staged";
}

std::string FirstLine(const SessionConfig& config, const SessionParts& parts) {
  const stager::SessionDescription& d = config.description;
  std::string model =
      parts.model != nullptr ? parts.model->Describe() : "none configured";
  std::string commands = d.mode().empty() ? "direct" : d.mode();
  if (!d.backend().empty()) absl::StrAppend(&commands, " (", d.backend(), ")");
  return absl::StrCat(
      "garuda-agent: model ", model, " | project ", parts.project->root(),
      " | commands ", commands, " | profile ",
      config.strict ? "strict" : "default", " | sandbox ",
      d.sandboxed() ? "on" : "NONE (commands run on the host and ask)",
      " | session ", config.session_id);
}

absl::StatusOr<std::unique_ptr<Session>> Session::Start(SessionConfig config,
                                                        SessionParts parts) {
  if (absl::Status profile = CheckProfile(config); !profile.ok()) {
    parts.audit
        ->Record(MakeEvent("session_refused", "", parts.project->root(),
                           "refused", profile.message()))
        .IgnoreError();
    return profile;
  }
  std::unique_ptr<Session> session(
      new Session(std::move(config), std::move(parts)));
  PersonDisplay& out = *session->parts_.interaction;
  out.ShowNotice(FirstLine(session->config_, session->parts_));
  for (const std::string& notice : session->config_.notices) {
    out.ShowNotice(notice);
  }
  for (const std::string& notice : session->config_.description.notices()) {
    out.ShowNotice(notice);
  }
  if (!session->config_.description.sandboxed()) {
    out.ShowNotice(absl::StrCat(
        "Notice: no OS sandbox (",
        session->config_.description.sandbox_problem().empty()
            ? std::string("the probe failed")
            : session->config_.description.sandbox_problem(),
        session->config_.require_sandbox
            ? "). The settings require the sandbox (requireSandbox): every "
              "command is refused."
            : "). Every command runs on the host and asks you first."));
  }
  if (session->parts_.model == nullptr) {
    out.ShowNotice(session->config_.no_model_hint);
  }
  RETURN_IF_ERROR(session->parts_.audit->Record(
      MakeEvent("session_start", "", session->parts_.project->root(), "start",
                FirstLine(session->config_, session->parts_))));
  if (!session->config_.description.sandboxed()) {
    RETURN_IF_ERROR(session->parts_.audit->Record(MakeEvent(
        "host_fallback", CommandToolName(), session->parts_.project->root(),
        "ask", "no OS sandbox: commands run on the host and ask")));
  }
  return session;
}

void Session::Restore(std::vector<provider::ChatMessage> messages) {
  conversation_.Restore(std::move(messages));
}

ToolContext Session::Tools() const {
  ToolContext tools;
  tools.session_id = config_.session_id;
  tools.tools = &tools_;
  tools.profile = config_.strict ? ToolProfile::kStrict : ToolProfile::kDefault;
  tools.sandboxed = config_.description.sandboxed();
  tools.require_sandbox = config_.strict || config_.require_sandbox;
  tools.staged = Staged(config_);
  tools.project = parts_.project;
  tools.permissions = parts_.permissions;
  tools.interaction = parts_.interaction;
  tools.stager = parts_.stager;
  tools.applier = parts_.applier;
  tools.audit = parts_.audit;
  tools.code = parts_.code;
  tools.check_write = parts_.check_write;
  tools.host_refusal = parts_.host_refusal;
  // Staged changes no person could answer are kept beside the journal.
  if (parts_.journal != nullptr) {
    tools.session_dir = Dirname(parts_.journal->path());
  }
  return tools;
}

absl::StatusOr<TurnOutcome> Session::RunTurn(const std::string& prompt,
                                             const CancelFlag* cancel) {
  const absl::Time start = absl::Now();
  TurnOutcome outcome;
  RETURN_IF_ERROR(stops_.CheckHelpers());
  if (parts_.model == nullptr) {
    outcome.end = TurnEnd::kFailed;
    outcome.stopped = config_.no_model_hint;
    parts_.interaction->ShowNotice(config_.no_model_hint);
    return outcome;
  }
  provider::BudgetRequestMeter budget_meter(parts_.budget);
  CountingMeter meter(&budget_meter);
  requests_.StartTurn();
  std::string text = prompt;
  if (!pending_person_output_.empty()) {
    text = absl::StrCat(pending_person_output_, "\n", prompt);
    pending_person_output_.clear();
  }
  ToolContext tools = Tools();
  tools.cancel = cancel;  // Ctrl-C stops a running command
  AnswerCalls calls(tools, &locks_->tools, parts_.events, stops_, conversation_,
                    [this](const std::vector<provider::ToolCall>& tasks,
                           const provider::ChatMessage& known_results,
                           const CancelFlag* cancel) {
                      return ChildAgents(ForChildren())
                          .RunTasks(tasks, known_results, cancel);
                    });
  TurnPieces pieces;
  pieces.model = parts_.model;
  pieces.display = parts_.interaction;
  pieces.events = parts_.events;
  pieces.conversation = &conversation_;
  pieces.requests = &requests_;
  pieces.stops = &stops_;
  pieces.compaction = &compaction_;
  pieces.calls = &calls;
  pieces.before_request = [this] { AddMcpRows(); };
  if (depth_ > 0) {
    pieces.wrap_up = [this, cancel](int step, CountingMeter* meter,
                                    TurnOutcome* outcome) {
      return WrapUp(step, cancel, meter, outcome);
    };
  }
  turn_meter_ = &meter;
  absl::Status steps = TurnLoop(pieces, cancel, &meter, &outcome).Run(text);
  turn_meter_ = nullptr;
  RETURN_IF_ERROR(steps);
  // Every reservation of the turn is settled or dropped by now (the client
  // ends each attempt's before Send returns), so the count is whole.
  meter.Fill(&outcome.usage);
  AddUsage(outcome.children_usage, &outcome.usage);
  outcome.duration = absl::Now() - start;
  return outcome;
}

absl::Status Session::End() {
  return parts_.audit->Record(MakeEvent(
      "session_end", "", parts_.project->root(), "end", config_.session_id));
}

}  // namespace agent
}  // namespace garuda
