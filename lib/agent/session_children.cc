// Session's child agents (children.h): its members that start, await and
// close the children of one answer's `task` calls, the floor, the wrap-up
// request and /budget's rows.
#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/struct.pb.h"
#include "lib/agent/builtin_rows.h"
#include "lib/agent/child_agents.h"
#include "lib/agent/children.h"
#include "lib/agent/request_estimate.h"
#include "lib/agent/session.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"
#include "lib/budget/limits.h"
#include "lib/budget/meter.h"
#include "lib/provider/json.h"
#include "lib/provider/wire.h"

namespace garuda {
namespace agent {
namespace {

constexpr char kChildPromptNote[] =
    "\n\nYou are a child agent: another agent gave you the task in the first "
    "message. Work on it with your tools; your last message is your whole "
    "answer to that agent (it sees nothing else), so put your findings in "
    "it. Keep it under 20000 characters.";

constexpr char kWrapUpNote[] =
    "[Garuda: your token budget cannot cover another step. Answer now with "
    "your findings so far, in one message, without tool calls.]";

ToolCallDone ErrorDone(const provider::ToolCall& call, std::string decision,
                       std::string text) {
  ToolCallDone done;
  done.result.set_tool_call_id(call.id());
  done.result.set_content(text);
  done.result.set_is_error(true);
  done.report.set_id(call.id());
  done.report.set_tool(call.name());
  done.report.set_arguments_json(call.arguments_json());
  done.report.set_decision(std::move(decision));
  done.report.set_outcome(OneLineOf(text));
  done.report.set_is_error(true);
  done.report.set_output(text);
  return done;
}

uint32_t Clamp32(int64_t value) {
  return static_cast<uint32_t>(
      std::clamp<int64_t>(value, 0, std::numeric_limits<uint32_t>::max()));
}

}  // namespace

struct ChildAgents::Child {
  std::string agent_id;
  TaskArguments args;
  uint32_t ledger_id = 0;
  int64_t lease = 0;
  std::unique_ptr<budget::BudgetClient> budget;
  std::unique_ptr<provider::ModelClient> model;
  std::unique_ptr<ChildInteraction> interaction;
  std::unique_ptr<AgentAudit> audit;
  std::unique_ptr<Session> session;
  absl::StatusOr<TurnOutcome> outcome = TurnOutcome();
  std::thread thread;
};

int64_t ChildAgents::FloorTokens(const provider::ChatMessage& known_results,
                                 const std::string& pending_id,
                                 int pending_children) const {
  provider::ModelRequest request = s_.requests_.Next(0, 0);
  if (known_results.tool_results_size() > 0) {
    *request.add_messages() = known_results;
  }
  absl::StatusOr<std::string> body = RequestBody(s_.parts_.model, request);
  // The exact structure of one more, empty, result.
  provider::ModelRequest plus = request;
  provider::ChatMessage* results = nullptr;
  if (known_results.tool_results_size() > 0) {
    results = plus.mutable_messages(plus.messages_size() - 1);
  } else {
    results = plus.add_messages();
    results->set_role("user");
  }
  results->add_tool_results()->set_tool_call_id(pending_id);
  absl::StatusOr<std::string> plus_body = RequestBody(s_.parts_.model, plus);
  budget::FloorShape shape;
  shape.last_reservation =
      s_.turn_meter_ != nullptr ? s_.turn_meter_->last_reserved() : 0;
  int64_t chars = 0;
  if (body.ok()) chars = static_cast<int64_t>(body->size());
  shape.current_input_tokens =
      std::max(budget::TokensForChars(chars), request.input_tokens_hint());
  shape.output_limit = s_.parts_.model->options().max_tokens;
  shape.pending_subagent_results = pending_children;
  if (body.ok() && plus_body.ok()) {
    shape.empty_result_message_chars =
        static_cast<int64_t>(plus_body->size() - body->size());
  } else {
    // Not measurable (never seen): a generous bound.
    shape.empty_result_message_chars = 512;
  }
  shape.compaction_tokens = CompactionReserveIfDue(
      s_.parts_.model, s_.config_.agents.context_window,
      s_.requests_.last_input_tokens(),
      shape.current_input_tokens +
          pending_children *
              budget::TokensForChars(budget::kSubagentResultCapChars *
                                     budget::kJsonEscapeFactor));
  return budget::EstimateFloorTokens(shape);
}

absl::StatusOr<bool> ChildAgents::StartChild(
    const provider::ToolCall& call, Child& agent,
    const provider::ChatMessage& known_results, int pending,
    const CancelFlag* cancel, ChildInteraction& view,
    const std::function<void()>& finished, TaskDone* refused) {
  const int64_t floor = s_.config_.agents.keep_floor
                            ? FloorTokens(known_results, call.id(), pending)
                            : 0;
  RETURN_IF_ERROR(s_.parts_.budget->SetFloor(floor).status());
  agent.agent_id = absl::StrCat(s_.agent_id_, ".", ++s_.children_started_);
  view.ShowToolCall(
      {call.id(), kTaskTool,
       absl::StrCat("task: ", OneLineOf(agent.args.description))});
  ASSIGN_OR_RETURN(budget::BudgetClient::Child opened,
                   s_.parts_.budget->OpenChild(
                       s_.config_.agents.child_token_budget, agent.agent_id));
  auto refuse = [&](const std::string& why) -> absl::StatusOr<bool> {
    refused->done = ErrorDone(call, "refused", why);
    ChildAgentReport* child = refused->done.report.mutable_child();
    child->set_agent_id(agent.agent_id);
    child->set_description(agent.args.description);
    child->set_depth(s_.depth_ + 1);
    child->set_outcome(absl::StrCat("refused: ", why));
    view.ShowToolOutcome({call.id(), kTaskTool, why, true});
    RETURN_IF_ERROR(s_.parts_.audit->Record(
        MakeEvent("child_refused", kTaskTool, agent.agent_id, "refused", why)));
    return false;
  };
  if (!opened.opened.granted()) {
    return refuse(absl::StrCat(
        "token budget: no lease for a child agent (", opened.opened.left(),
        " tokens left, ", floor,
        " kept for this agent's own next request); the task did not run. "
        "Do the work yourself or answer with what you have."));
  }
  agent.ledger_id = opened.opened.child();
  agent.lease = opened.opened.lease();
  ASSIGN_OR_RETURN(agent.budget,
                   budget::BudgetClient::FromFd(opened.channel.Release()));
  absl::StatusOr<std::unique_ptr<provider::ModelClient>> model =
      provider::ModelClient::Create(s_.parts_.model->options());
  if (!model.ok()) {
    budget::ChildReport report;
    report.set_report_id(agent.agent_id);
    RETURN_IF_ERROR(
        s_.parts_.budget->CloseChild(agent.ledger_id, report).status());
    return refuse(absl::StrCat("the child's model connection: ",
                               model.status().message()));
  }
  agent.model = std::move(*model);
  agent.interaction = std::make_unique<ChildInteraction>(
      s_.root_interaction_, s_.locks_.get(), s_.depth_ + 1);
  agent.audit = std::make_unique<AgentAudit>(s_.session_audit_, s_.locks_.get(),
                                             agent.agent_id);
  SessionParts parts = s_.parts_;
  parts.interaction = agent.interaction.get();
  parts.audit = agent.audit.get();
  parts.budget = agent.budget.get();
  parts.model = agent.model.get();
  parts.events = nullptr;
  parts.journal = nullptr;
  // A child's own check is already behind the lock; the session's is not.
  if (s_.depth_ == 0 && s_.parts_.check_helpers) {
    parts.check_helpers = [locks = s_.locks_, check = s_.parts_.check_helpers] {
      absl::MutexLock lock(&locks->tools);
      return check();
    };
  }
  agent.session.reset(new Session(s_, parts, agent.agent_id));
  RETURN_IF_ERROR(s_.parts_.audit->Record(
      MakeEvent("child_start", kTaskTool, agent.agent_id, "start",
                absl::StrCat(OneLineOf(agent.args.description), " (lease ",
                             agent.lease, " tokens)"))));
  agent.thread = std::thread([&agent, cancel, finished] {
    agent.outcome = agent.session->RunTurn(agent.args.prompt, cancel);
    finished();
  });
  return true;
}

absl::StatusOr<TaskDone> ChildAgents::FinishChild(
    const provider::ToolCall& call, Child& agent, ChildInteraction& view) {
  agent.thread.join();
  TurnOutcome outcome = agent.outcome.ok() ? *agent.outcome : TurnOutcome();
  budget::ChildReport report;
  report.set_report_id(agent.agent_id);
  report.set_reported_tokens(outcome.usage.charged_tokens());
  ASSIGN_OR_RETURN(budget::ChildClosed closed,
                   s_.parts_.budget->CloseChild(agent.ledger_id, report));
  RETURN_IF_ERROR(agent.outcome.status());

  TaskDone task;
  task.usage = outcome.usage;
  task.usage.set_charged_tokens(Clamp32(closed.charged()));
  bool cut = false;
  std::string text;
  std::string state;
  bool is_error = false;
  switch (outcome.end) {
    case TurnEnd::kAnswered:
      state = outcome.stopped.empty() ? "answered" : outcome.stopped;
      text = CapChildAnswer(outcome.answer, &cut);
      break;
    case TurnEnd::kBudget:
      state = "budget exhausted";
      text = CapChildAnswer(outcome.answer, &cut);
      is_error = true;
      break;
    case TurnEnd::kCancelled:
      state = "cancelled";
      text = CapChildAnswer(
          absl::StrCat("[Garuda: the person cancelled this task.]",
                       outcome.answer.empty() ? "" : "\nIts last text: ",
                       outcome.answer),
          &cut);
      is_error = true;
      break;
    case TurnEnd::kFailed:
      state = absl::StrCat("failed: ", outcome.stopped);
      text = CapChildAnswer(
          absl::StrCat("[Garuda: the task failed: ", outcome.stopped, "]",
                       outcome.answer.empty() ? "" : "\n", outcome.answer),
          &cut);
      is_error = true;
      break;
  }
  const std::string ended =
      absl::StrCat("task ended: ", closed.charged(), " tokens");
  // The description too: parallel children end in any order.
  view.ShowToolOutcome(
      {call.id(), kTaskTool,
       absl::StrCat(ended, " (", OneLineOf(agent.args.description),
                    state == "answered" ? "" : absl::StrCat("; ", state), ")"),
       is_error});
  RETURN_IF_ERROR(s_.parts_.audit->Record(MakeEvent(
      "child_end", kTaskTool, agent.agent_id, state,
      absl::StrCat("charged ", closed.charged(), ", returned ",
                   closed.returned(), " of a lease of ", agent.lease))));

  ToolCallDone& done = task.done;
  done.result.set_tool_call_id(call.id());
  done.result.set_content(text);
  done.result.set_is_error(is_error);
  done.report.set_id(call.id());
  done.report.set_tool(kTaskTool);
  done.report.set_arguments_json(call.arguments_json());
  done.report.set_decision(absl::StrCat("child agent ", agent.agent_id,
                                        " at depth ", s_.depth_ + 1));
  done.report.set_outcome(ended);
  done.report.set_is_error(is_error);
  done.report.set_output(text);
  ChildAgentReport* child = done.report.mutable_child();
  child->set_agent_id(agent.agent_id);
  child->set_description(agent.args.description);
  child->set_depth(s_.depth_ + 1);
  child->set_outcome(state);
  for (const ToolCallReport& call_report : outcome.tool_calls) {
    *child->add_tool_calls() = call_report;
  }
  *child->mutable_usage() = task.usage;
  child->set_lease_tokens(Clamp32(agent.lease));
  child->set_returned_tokens(Clamp32(closed.returned()));
  child->set_answer_cut(cut);
  s_.descriptions_[agent.agent_id] = agent.args.description;
  for (const auto& [id, description] : agent.session->descriptions_) {
    s_.descriptions_[id] = description;
  }
  return task;
}

absl::StatusOr<std::vector<TaskDone>> ChildAgents::RunTasks(
    const std::vector<provider::ToolCall>& calls,
    const provider::ChatMessage& known_results, const CancelFlag* cancel) {
  std::vector<TaskDone> done(calls.size());
  ChildInteraction view(s_.root_interaction_, s_.locks_.get(), s_.depth_);
  std::vector<std::unique_ptr<Child>> agents(calls.size());
  std::deque<size_t> queue;
  for (size_t i = 0; i < calls.size(); ++i) {
    absl::StatusOr<TaskArguments> args =
        ParseTaskArguments(calls[i].arguments_json());
    if (!args.ok()) {
      done[i].done = ErrorDone(calls[i], "input check failed",
                               std::string(args.status().message()));
      view.ShowToolOutcome({calls[i].id(), kTaskTool,
                            std::string(args.status().message()), true});
      RETURN_IF_ERROR(s_.parts_.audit->Record(MakeEvent(
          "tool_call", kTaskTool, OneLineOf(calls[i].arguments_json()),
          "input check failed", args.status().message())));
    } else if (s_.depth_ >= s_.config_.agents.max_depth) {
      const std::string why = absl::StrCat(
          "task is not available at depth ", s_.depth_, " (agents.maxDepth is ",
          s_.config_.agents.max_depth, "): do this work yourself.");
      done[i].done = ErrorDone(calls[i], "refused", why);
      RETURN_IF_ERROR(s_.parts_.audit->Record(MakeEvent(
          "tool_call", kTaskTool, OneLineOf(args->description), "deny", why)));
    } else {
      agents[i] = std::make_unique<Child>();
      agents[i]->args = std::move(*args);
      queue.push_back(i);
    }
  }

  absl::Mutex mutex;
  std::deque<size_t> finished;
  int running = 0;
  absl::Status first_error;
  const int max_parallel = std::max(1, s_.config_.agents.max_parallel);
  auto cancelled = [cancel] {
    return cancel != nullptr && cancel->cancelled();
  };
  while (true) {
    while (!queue.empty() && running < max_parallel && first_error.ok() &&
           !cancelled()) {
      const size_t i = queue.front();
      queue.pop_front();
      const int pending = static_cast<int>(queue.size()) + running + 1;
      absl::StatusOr<bool> started = StartChild(
          calls[i], *agents[i], known_results, pending, cancel, view,
          [&mutex, &finished, i] {
            absl::MutexLock lock(&mutex);
            finished.push_back(i);
          },
          &done[i]);
      if (!started.ok()) {
        first_error = started.status();
      } else if (*started) {
        ++running;
      }
    }
    // Every started child is awaited, also after a failure or a cancel:
    // its reservations stay tracked until it has ended.
    if (running == 0) break;
    size_t i = 0;
    {
      absl::MutexLock lock(&mutex);
      mutex.Await(absl::Condition(
          +[](std::deque<size_t>* f) { return !f->empty(); }, &finished));
      i = finished.front();
      finished.pop_front();
    }
    --running;
    absl::StatusOr<TaskDone> task = FinishChild(calls[i], *agents[i], view);
    if (!task.ok()) {
      if (first_error.ok()) first_error = task.status();
      done[i].done =
          ErrorDone(calls[i], "failed", std::string(task.status().message()));
    } else {
      done[i] = std::move(*task);
    }
  }
  for (size_t i : queue) {
    done[i].done = ErrorDone(calls[i], "not run",
                             cancelled() ? "Not run: the person cancelled."
                                         : "Not run: the session stopped.");
  }
  if (first_error.ok()) {
    // No child is open now: the floor has nothing left to protect.
    absl::Status reset = s_.parts_.budget->SetFloor(0).status();
    if (!reset.ok()) first_error = reset;
  }
  RETURN_IF_ERROR(first_error);
  return done;
}

Session::Session(const Session& parent, SessionParts parts,
                 std::string agent_id)
    : config_(parent.config_),
      parts_(std::move(parts)),
      system_prompt_(absl::StrCat(parent.system_prompt_, kChildPromptNote)),
      conversation_(parts_.journal),
      depth_(parent.depth_ + 1),
      agent_id_(std::move(agent_id)),
      locks_(parent.locks_),
      root_interaction_(parent.root_interaction_),
      session_audit_(parent.session_audit_) {
  tools_ = BuiltinToolTable(Offers());
  AddMcpRows();
}

Session::~Session() = default;

absl::Status Session::WrapUp(int step, const CancelFlag* cancel,
                             CountingMeter* meter, TurnOutcome* outcome) {
  RETURN_IF_ERROR(conversation_.NoteForModel(kWrapUpNote));
  // Built whole first and reserved like a main call (system prompt and
  // tools included), also with no step done yet.
  provider::ModelRequest request = requests_.Next(step, 0);
  request.set_purpose("wrap-up");
  request.set_min_output_tokens(0);  // the client's least output
  request.set_request_id(absl::StrCat(request.request_id(), "-wrap-up"));
  provider::StreamCallbacks callbacks;
  absl::StatusOr<provider::ModelResponse> response =
      parts_.model->Send(request, meter, callbacks, cancel);
  if (response.ok()) {
    requests_.Count(*response, &outcome->usage);
    provider::ChatMessage assistant;
    assistant.set_role("assistant");
    assistant.set_text(response->text());
    RETURN_IF_ERROR(conversation_.Add(std::move(assistant)));
    outcome->answer = response->text();
    outcome->end = TurnEnd::kAnswered;
    outcome->stopped = "wrapped up (token budget)";
    return absl::OkStatus();
  }
  if (!(absl::IsResourceExhausted(response.status()) &&
        absl::StartsWith(response.status().message(), budget::kTokenBudget))) {
    return stops_.FailedRequest(response.status(), request, outcome);
  }
  // Not even the wrap-up fits: a structured result with what there is.
  google::protobuf::Struct result;
  auto& fields = *result.mutable_fields();
  fields["status"].set_string_value("budget_exhausted");
  fields["reason"].set_string_value(std::string(response.status().message()));
  // Bounded so that the whole stays valid JSON inside the answer's cap
  // (escaping can make a character six): fewer calls first, then less text.
  google::protobuf::ListValue* calls_run =
      fields["tool_calls"].mutable_list_value();
  for (const ToolCallReport& call : outcome->tool_calls) {
    calls_run->add_values()->set_string_value(
        OneLineOf(absl::StrCat(call.tool(), ": ", call.outcome())));
  }
  std::string last_text = outcome->answer;
  fields["last_text"].set_string_value(last_text);
  while (MessageToJsonLine(result).size() >
         static_cast<size_t>(budget::kSubagentResultCapChars)) {
    if (calls_run->values_size() > 0) {
      calls_run->mutable_values()->erase(calls_run->mutable_values()->begin());
      continue;
    }
    if (last_text.empty()) break;  // the reason alone (a short status)
    size_t keep = last_text.size() / 2;
    while (keep > 0 &&
           (static_cast<unsigned char>(last_text[keep]) & 0xC0) == 0x80) {
      --keep;
    }
    last_text.resize(keep);
    fields["last_text"].set_string_value(last_text);
  }
  outcome->answer = MessageToJsonLine(result);
  outcome->end = TurnEnd::kBudget;
  outcome->stopped = "budget exhausted";
  return parts_.audit->Record(MakeEvent("budget_refused", "",
                                        request.request_id(), "refused",
                                        response.status().message()));
}

}  // namespace agent
}  // namespace garuda
