#include "lib/agent/session.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "lib/agent/builtin_rows.h"
#include "lib/agent/child_agents.h"
#include "lib/agent/command_tool.h"
#include "lib/agent/request_estimate.h"
#include "lib/agent/schedule.h"
#include "lib/agent/session_view.h"
#include "lib/agent/system_prompt.h"
#include "lib/agent/tool_calls.h"
#include "lib/agent/usage_meter.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/budget/limits.h"
#include "lib/provider/budget_meter.h"

namespace garuda {
namespace agent {
namespace {

int64_t MessageChars(const provider::ChatMessage& message) {
  int64_t chars = static_cast<int64_t>(message.text().size());
  for (const provider::ToolCall& call : message.tool_calls()) {
    chars +=
        static_cast<int64_t>(call.arguments_json().size() + call.name().size());
  }
  for (const provider::ToolResult& result : message.tool_results()) {
    chars += static_cast<int64_t>(result.content().size());
  }
  return chars;
}

}  // namespace

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
  facts.staged = staged();
  facts.sandboxed = config_.description.sandboxed();
  facts.strict = config_.strict;
  system_prompt_ = SystemPrompt(facts) + config_.instructions_prompt;
  tools_ = BuiltinToolTable(Offers());
}

BuiltinOffers Session::Offers() const {
  return {[this] {
            return parts_.code != nullptr && !parts_.code->languages().empty();
          },
          [this] { return depth_ < config_.agents.max_depth; }};
}

bool Session::staged() const { return config_.description.mode() == "staged"; }

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
  Interaction& out = *session->parts_.interaction;
  out.ShowNotice(session->FirstLine());
  for (const std::string& notice : session->config_.notices) {
    out.ShowNotice(notice);
  }
  for (const std::string& notice : session->config_.description.notices()) {
    out.ShowNotice(notice);
  }
  if (!session->sandboxed()) {
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
                session->FirstLine())));
  if (!session->sandboxed()) {
    RETURN_IF_ERROR(session->parts_.audit->Record(MakeEvent(
        "host_fallback", CommandToolName(), session->parts_.project->root(),
        "ask", "no OS sandbox: commands run on the host and ask")));
  }
  return session;
}

std::string Session::FirstLine() const {
  const stager::SessionDescription& d = config_.description;
  std::string model =
      parts_.model != nullptr ? parts_.model->Describe() : "none configured";
  std::string commands = d.mode().empty() ? "direct" : d.mode();
  if (!d.backend().empty()) absl::StrAppend(&commands, " (", d.backend(), ")");
  return absl::StrCat(
      "garuda-agent: model ", model, " | project ", parts_.project->root(),
      " | commands ", commands, " | profile ",
      config_.strict ? "strict" : "default", " | sandbox ",
      d.sandboxed() ? "on" : "NONE (commands run on the host and ask)",
      " | session ", config_.session_id);
}

void Session::Restore(std::vector<provider::ChatMessage> messages) {
  conversation_.Restore(std::move(messages));
}

ToolContext Session::Tools() const {
  ToolContext tools;
  tools.session_id = config_.session_id;
  tools.tools = &tools_;
  tools.profile = config_.strict ? ToolProfile::kStrict : ToolProfile::kDefault;
  tools.sandboxed = sandboxed();
  tools.require_sandbox = config_.strict || config_.require_sandbox;
  tools.staged = staged();
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

absl::Status Session::CheckHelpers() {
  if (!parts_.check_helpers) return absl::OkStatus();
  absl::Status alive = parts_.check_helpers();
  if (!alive.ok()) {
    return absl::UnavailableError(
        absl::StrCat("the session stopped: ", alive.message()));
  }
  return absl::OkStatus();
}

provider::ModelRequest Session::NextRequest(const ToolContext& tools, int step,
                                            size_t measured_messages) const {
  provider::ModelRequest request;
  request.set_system(system_prompt_);
  for (const provider::ChatMessage& message : conversation_.messages()) {
    *request.add_messages() = message;
  }
  for (provider::ToolDefinition& tool : tools_.Definitions(tools.profile)) {
    *request.add_tools() = std::move(tool);
  }
  // A child's step is sent only with its whole output limit: a step cut
  // short helps nobody, and what is left goes to its wrap-up request.
  if (depth_ > 0 && parts_.model != nullptr) {
    request.set_min_output_tokens(parts_.model->options().max_tokens);
  }
  request.set_request_id(absl::StrCat(
      config_.session_id, depth_ > 0 ? absl::StrCat("-", agent_id_) : "", "-",
      turns_, "-", step + 1));
  if (last_input_tokens_ > 0) {
    int64_t new_chars = 0;
    for (size_t i = measured_messages; i < conversation_.messages().size();
         ++i) {
      new_chars += MessageChars(conversation_.messages()[i]);
    }
    request.set_input_tokens_hint(last_input_tokens_ +
                                  budget::TokensForChars(new_chars));
  }
  return request;
}

absl::Status Session::StopForFailedRequest(
    const absl::Status& error, const provider::ModelRequest& request,
    TurnOutcome* outcome) {
  // A budgeter that is gone means no more metered requests.
  if (!parts_.budget->health().ok()) {
    RETURN_IF_ERROR(CheckHelpers());
    return absl::UnavailableError(absl::StrCat(
        "the session stopped: ", parts_.budget->health().message()));
  }
  RETURN_IF_ERROR(CheckHelpers());
  if (absl::IsResourceExhausted(error) &&
      absl::StartsWith(error.message(), budget::kTokenBudget)) {
    outcome->end = TurnEnd::kBudget;
    outcome->stopped = absl::StrCat(
        "token budget: the session's token budget cannot cover the next "
        "model request, so this turn ended (",
        error.message(), ")");
    RETURN_IF_ERROR(parts_.audit->Record(
        MakeEvent("budget_refused", "", request.request_id(), "refused",
                  error.message())));
    parts_.interaction->ShowNotice(outcome->stopped);
    return conversation_.NoteForModel(
        absl::StrCat("[Garuda: ", outcome->stopped,
                     ". Finish with what you have or ask the person to raise "
                     "budget.tokenBudget.]"));
  }
  if (absl::IsCancelled(error)) {
    outcome->end = TurnEnd::kCancelled;
    outcome->stopped = "cancelled";
    parts_.interaction->ShowNotice(
        "Cancelled: the request stopped (its reserved tokens stay "
        "spent).");
    return conversation_.NoteForModel(
        "[Garuda: the person cancelled the model's answer.]");
  }
  outcome->end = TurnEnd::kFailed;
  outcome->stopped = absl::StrCat("model request failed: ", error.message());
  parts_.interaction->ShowNotice(outcome->stopped);
  return absl::OkStatus();
}

namespace {

// A tool result as the report shows it: the head of what the model got.
constexpr size_t kReportOutputBytes = 16 * 1024;
std::string ReportOutput(const std::string& content) {
  if (content.size() <= kReportOutputBytes) return content;
  return absl::StrCat(content.substr(0, kReportOutputBytes), "\n[",
                      content.size() - kReportOutputBytes,
                      " more bytes not shown]");
}

}  // namespace

void Session::CountUsage(const provider::ModelResponse& response,
                         UsageReport* usage) {
  // Requests, charges and usage_reported come from the turn's CountingMeter,
  // which also sees the attempts that failed.
  usage->set_input_tokens(
      AddCount(usage->input_tokens(), response.usage().input_tokens()));
  usage->set_output_tokens(
      AddCount(usage->output_tokens(), response.usage().output_tokens()));
  if (response.usage().has_input_tokens()) {
    last_input_tokens_ = response.usage().input_tokens();
  }
}

absl::StatusOr<bool> Session::RunToolCalls(
    const ToolContext& tools, const provider::ModelResponse& response,
    const CancelFlag* cancel, TurnOutcome* outcome) {
  provider::ChatMessage results;
  results.set_role("user");
  bool cancelled = false;
  // Every call but `task` runs here in call order; the `task` calls then
  // run as child agents, in parallel (children.h). Results and reports are
  // put back in call order.
  const int calls = response.tool_calls_size();
  std::vector<std::optional<provider::ToolResult>> ordered(calls);
  std::vector<std::optional<ToolCallReport>> reports(calls);
  std::vector<provider::ToolCall> tasks;
  std::vector<int> task_index;
  for (int i = 0; i < calls; ++i) {
    const provider::ToolCall& call = response.tool_calls(i);
    if (cancelled || (cancel != nullptr && cancel->cancelled())) {
      cancelled = true;
      provider::ToolResult result;
      result.set_tool_call_id(call.id());
      result.set_content("Not run: the person cancelled.");
      result.set_is_error(true);
      ordered[i] = result;
      continue;
    }
    if (parts_.events != nullptr) parts_.events->ToolCall(call);
    const ToolRow* row = tools_.Find(call.name());
    if (row != nullptr && row->batched) {
      tasks.push_back(call);
      task_index.push_back(i);
      continue;
    }
    absl::StatusOr<ToolCallDone> ran;
    {
      // One agent at a time at the helpers and the questions.
      absl::MutexLock lock(&locks_->tools);
      ran = RunToolCall(tools, call);
    }
    if (!ran.ok()) return ran.status();
    ToolCallDone& done = *ran;
    done.report.set_output(ReportOutput(done.result.content()));
    if (parts_.events != nullptr) parts_.events->ToolResult(done.report);
    *results.add_tool_results() = done.result;
    ordered[i] = done.result;
    reports[i] = done.report;
    RETURN_IF_ERROR(CheckHelpers());
  }
  if (!tasks.empty()) {
    std::vector<TaskDone> children;
    if (cancelled || (cancel != nullptr && cancel->cancelled())) {
      cancelled = true;
    } else {
      ASSIGN_OR_RETURN(children,
                       ChildAgents(*this).RunTasks(tasks, results, cancel));
    }
    for (size_t t = 0; t < tasks.size(); ++t) {
      const int i = task_index[t];
      if (t >= children.size()) {
        provider::ToolResult result;
        result.set_tool_call_id(tasks[t].id());
        result.set_content("Not run: the person cancelled.");
        result.set_is_error(true);
        ordered[i] = result;
        continue;
      }
      TaskDone& child = children[t];
      child.done.report.set_output(ReportOutput(child.done.result.content()));
      if (parts_.events != nullptr) {
        parts_.events->ToolResult(child.done.report);
      }
      AddUsage(child.usage, &outcome->children_usage);
      ordered[i] = child.done.result;
      reports[i] = child.done.report;
    }
    RETURN_IF_ERROR(CheckHelpers());
    if (cancel != nullptr && cancel->cancelled()) cancelled = true;
  }
  results.clear_tool_results();
  for (int i = 0; i < calls; ++i) {
    *results.add_tool_results() = *ordered[i];
    if (reports[i]) outcome->tool_calls.push_back(*reports[i]);
  }
  // A Ctrl-C during the last call (it stopped a command) ends the turn too.
  if (cancel != nullptr && cancel->cancelled()) cancelled = true;
  RETURN_IF_ERROR(conversation_.Add(std::move(results)));
  return cancelled;
}

absl::StatusOr<TurnOutcome> Session::RunTurn(const std::string& prompt,
                                             const CancelFlag* cancel) {
  const absl::Time start = absl::Now();
  TurnOutcome outcome;
  RETURN_IF_ERROR(CheckHelpers());
  if (parts_.model == nullptr) {
    outcome.end = TurnEnd::kFailed;
    outcome.stopped = config_.no_model_hint;
    parts_.interaction->ShowNotice(config_.no_model_hint);
    return outcome;
  }
  provider::BudgetRequestMeter budget_meter(parts_.budget);
  CountingMeter meter(&budget_meter);
  turn_meter_ = &meter;
  absl::Status steps = RunSteps(prompt, cancel, &meter, &outcome);
  turn_meter_ = nullptr;
  RETURN_IF_ERROR(steps);
  // Every reservation of the turn is settled or dropped by now (the client
  // ends each attempt's before Send returns), so the count is whole.
  meter.Fill(&outcome.usage);
  AddUsage(outcome.children_usage, &outcome.usage);
  outcome.duration = absl::Now() - start;
  return outcome;
}

absl::Status Session::RunSteps(const std::string& prompt,
                               const CancelFlag* cancel, CountingMeter* meter,
                               TurnOutcome* outcome) {
  ++turns_;
  std::string text = prompt;
  if (!pending_person_output_.empty()) {
    text = absl::StrCat(pending_person_output_, "\n", prompt);
    pending_person_output_.clear();
  }
  if (!conversation_.messages().empty() &&
      conversation_.messages().back().role() == "user") {
    RETURN_IF_ERROR(conversation_.NoteForModel(text));
  } else {
    provider::ChatMessage user;
    user.set_role("user");
    user.set_text(text);
    RETURN_IF_ERROR(conversation_.Add(std::move(user)));
  }

  ToolContext tools = Tools();
  tools.cancel = cancel;  // Ctrl-C stops a running command
  size_t measured_messages = 0;
  for (int step = 0; step < kMaxStepsPerTurn; ++step) {
    provider::ModelRequest request =
        NextRequest(tools, step, measured_messages);
    measured_messages = conversation_.messages().size();
    // After a cancel (also one seen by a child), no new request starts.
    if (step > 0 && cancel != nullptr && cancel->cancelled()) {
      return StopForFailedRequest(absl::CancelledError("cancelled"), request,
                                  outcome);
    }
    // A conversation of one message (a summary, a prompt) is not compacted
    // again: there is nothing to gain, and it would loop.
    if (conversation_.messages().size() > 1 &&
        CompactionDue(parts_.model, config_.agents.context_window,
                      InputEstimate(parts_.model, request))) {
      ASSIGN_OR_RETURN(bool compacted, Compact(meter, cancel, outcome));
      if (!compacted) return absl::OkStatus();
      request = NextRequest(tools, step, conversation_.messages().size());
      measured_messages = conversation_.messages().size();
    }

    // What arrived of this answer, kept as the turn's answer when the
    // request then fails or is cancelled.
    std::string streamed;
    provider::StreamCallbacks callbacks;
    callbacks.on_text = [this, &streamed](absl::string_view delta) {
      streamed.append(delta.data(), delta.size());
      parts_.interaction->ShowText(delta);
      if (parts_.events != nullptr) parts_.events->Text(delta);
    };
    callbacks.on_retry = [this,
                          &streamed](const provider::RetryNotice& notice) {
      streamed.clear();
      parts_.interaction->ShowRetry(notice.reason);
    };
    absl::StatusOr<provider::ModelResponse> response =
        parts_.model->Send(request, meter, callbacks, cancel);
    if (!response.ok()) {
      if (!streamed.empty()) outcome->answer = streamed;
      if (depth_ > 0 && absl::IsResourceExhausted(response.status()) &&
          absl::StartsWith(response.status().message(), budget::kTokenBudget)) {
        return WrapUp(tools, step, cancel, meter, outcome);
      }
      return StopForFailedRequest(response.status(), request, outcome);
    }
    if (!response->text().empty()) parts_.interaction->ShowText("\n");
    CountUsage(*response, &outcome->usage);
    outcome->model_stop_reason = response->stop_reason();
    if (parts_.events != nullptr) {
      UsageReport so_far = outcome->usage;
      meter->Fill(&so_far);
      AddUsage(outcome->children_usage, &so_far);
      parts_.events->Usage(so_far);
    }

    provider::ChatMessage assistant;
    assistant.set_role("assistant");
    assistant.set_text(response->text());
    for (const provider::ToolCall& call : response->tool_calls()) {
      *assistant.add_tool_calls() = call;
    }
    RETURN_IF_ERROR(conversation_.Add(assistant));
    outcome->answer = response->text();
    if (response->tool_calls().empty()) return absl::OkStatus();

    ASSIGN_OR_RETURN(bool cancelled,
                     RunToolCalls(tools, *response, cancel, outcome));
    if (cancelled) {
      outcome->end = TurnEnd::kCancelled;
      outcome->stopped = "cancelled";
      parts_.interaction->ShowNotice("Cancelled.");
      return absl::OkStatus();
    }
  }
  outcome->end = TurnEnd::kFailed;
  outcome->step_limit = true;
  outcome->stopped = absl::StrCat("the turn stopped after ", kMaxStepsPerTurn,
                                  " model requests");
  parts_.interaction->ShowNotice(outcome->stopped);
  return absl::OkStatus();
}

absl::Status Session::End() {
  return parts_.audit->Record(MakeEvent(
      "session_end", "", parts_.project->root(), "end", config_.session_id));
}

}  // namespace agent
}  // namespace garuda
