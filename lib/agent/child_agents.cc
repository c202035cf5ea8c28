// ChildAgents (child_agents.h): one answer's `task` calls as child agents,
// their leases, the parent's floor, the answers' cut and the refills that
// order the children's last requests.
#include "lib/agent/child_agents.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "lib/agent/children.h"
#include "lib/agent/request_estimate.h"
#include "lib/base/status_macros.h"
#include "lib/budget/limits.h"
#include "lib/budget/meter.h"

namespace garuda {
namespace agent {
namespace {

// What the parent has left after a child, for its model.
std::string BudgetNote(int64_t left, int64_t cap) {
  const int64_t percent = cap > 0 ? left * 100 / cap : 0;
  return absl::StrCat("\n[Garuda: after this task you have ", left,
                      " tokens left to reserve, ", percent, " % of your ", cap,
                      "; running children's leases are not in it.]");
}

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
  ChildRun run;
  std::thread thread;
};

// One answer's `task` calls while they run.
struct ChildAgents::Batch {
  const std::vector<provider::ToolCall>* calls = nullptr;
  const CancelFlag* cancel = nullptr;
  std::unique_ptr<ChildInteraction> view;
  // The results the parent's next request will carry so far: the answer's
  // other calls, then each child's as it ends.
  provider::ChatMessage results;
  std::vector<TaskDone> done;
  std::vector<std::unique_ptr<Child>> agents;
  std::deque<size_t> queue;  // not started yet
  // What the parent can spend (its lease, or the session's limit), the
  // floor's part per pending answer, and what an answer may carry.
  int64_t cap = 0;
  int64_t answer_tokens = 0;
  int64_t answer_chars = budget::kSubagentResultCapChars;
  // The result message around one empty result, as the provider's format
  // builds it (measured by the last FloorTokens).
  int64_t empty_result_chars = 512;
  absl::Mutex mutex;
  std::deque<size_t> finished ABSL_GUARDED_BY(mutex);
  // The parent's budget while its children run: its channel is used by the
  // parent's thread and by children asking for more lease (Refill), one at
  // a time.
  absl::Mutex pool;
  int64_t floor ABSL_GUARDED_BY(pool) = 0;
  int64_t free ABSL_GUARDED_BY(pool) = 0;  // what is above the floor
  int running ABSL_GUARDED_BY(pool) = 0;
  int refilling ABSL_GUARDED_BY(pool) = 0;  // running, waiting in Refill
  bool all_started ABSL_GUARDED_BY(pool) = false;
};

ChildAgents::ChildAgents(ChildHost host) : host_(std::move(host)) {}
ChildAgents::~ChildAgents() = default;

int64_t ChildAgents::FloorTokens(Batch& batch, int pending) const {
  const provider::ModelClient* model = host_.parts.model;
  provider::ModelRequest request = host_.next_request();
  absl::StatusOr<std::string> before = RequestBody(model, request);
  const bool have_results = batch.results.tool_results_size() > 0;
  if (have_results) *request.add_messages() = batch.results;
  absl::StatusOr<std::string> body = RequestBody(model, request);
  // The exact structure of one more, empty, result.
  provider::ModelRequest plus = request;
  provider::ChatMessage* results = nullptr;
  if (have_results) {
    results = plus.mutable_messages(plus.messages_size() - 1);
  } else {
    results = plus.add_messages();
    results->set_role("user");
  }
  results->add_tool_results()->set_tool_call_id("pending");
  absl::StatusOr<std::string> plus_body = RequestBody(model, plus);
  budget::FloorShape shape;
  shape.last_reservation = host_.last_reservation;
  int64_t chars = 0;
  int64_t hint = request.input_tokens_hint();
  if (body.ok()) chars = static_cast<int64_t>(body->size());
  // The hint counts the conversation; the results are new to it.
  if (hint > 0 && before.ok() && body.ok()) {
    hint +=
        budget::TokensForChars(chars - static_cast<int64_t>(before->size()));
  }
  shape.current_input_tokens = std::max(budget::TokensForChars(chars), hint);
  shape.output_limit = model->options().max_tokens;
  shape.pending_subagent_results = pending;
  if (body.ok() && plus_body.ok()) {
    batch.empty_result_chars =
        static_cast<int64_t>(plus_body->size() - body->size());
  }
  shape.empty_result_message_chars = batch.empty_result_chars;
  const bool worst_case = host_.settings.worst_case_floor;
  shape.answer_reserve_tokens = worst_case ? 0 : batch.answer_tokens;
  const int64_t per_answer =
      worst_case ? budget::TokensForChars(budget::kSubagentResultCapChars *
                                          budget::kJsonEscapeFactor)
                 : batch.answer_tokens;
  shape.compaction_tokens = CompactionReserveIfDue(
      model, host_.settings.context_window, host_.last_input_tokens,
      shape.current_input_tokens + pending * per_answer);
  return budget::EstimateFloorTokens(shape);
}

int64_t ChildAgents::FirstRequestTokens(const Child& agent) const {
  // The parent's system prompt and tools with the child's note and prompt:
  // a child offers no more tools than its parent.
  provider::ModelRequest request = host_.next_request();
  request.clear_messages();
  request.clear_input_tokens_hint();
  request.set_system(absl::StrCat(request.system(), ChildPromptNote(0)));
  provider::ChatMessage* prompt = request.add_messages();
  prompt->set_role("user");
  prompt->set_text(agent.args.prompt);
  return InputEstimate(host_.parts.model, request) +
         host_.parts.model->options().max_tokens;
}

absl::StatusOr<bool> ChildAgents::StartChild(Batch& batch, size_t i,
                                             bool* waiting) {
  absl::MutexLock pool(&batch.pool);
  const int running = batch.running;
  const provider::ToolCall& call = (*batch.calls)[i];
  Child& agent = *batch.agents[i];
  ChildInteraction& view = *batch.view;
  const ChildSettings& settings = host_.settings;
  // The answers still to come: this one, the running ones, the waiting.
  const int pending = static_cast<int>(batch.queue.size()) + running + 1;
  const int64_t floor = settings.keep_floor ? FloorTokens(batch, pending) : 0;
  ASSIGN_OR_RETURN(budget::FloorSet set, host_.parts.budget->SetFloor(floor));
  batch.floor = floor;
  batch.free = set.left() - floor;
  int64_t limit = settings.child_token_budget;
  int64_t first = 0;
  if (!settings.worst_case_floor) {
    // A share of what is above the floor for each child not started yet,
    // at least room for two requests (a step and a wrap-up) when there
    // is; less only when no sibling runs that could return its rest.
    const int64_t free = std::max<int64_t>(0, set.left() - floor);
    first = FirstRequestTokens(agent);
    const int64_t not_started = static_cast<int64_t>(batch.queue.size()) + 1;
    limit = std::min(settings.child_token_budget,
                     std::max(free / not_started, 2 * first));
    if (free < limit && running > 0) {
      *waiting = true;
      return false;
    }
    limit = std::min(limit, free);
    // agents.childTokenBudget may be less than a request: the person's
    // choice, which the child's wrap-up or its "budget exhausted" answer
    // then says; the budget itself must have room for the first request.
    first = std::min(first, settings.child_token_budget);
  }
  agent.agent_id = absl::StrCat(host_.agent_id, ".", ++*host_.children_started);
  view.ShowToolCall(
      {call.id(), kTaskTool,
       absl::StrCat("task: ", OneLineOf(agent.args.description))});
  auto refuse = [&](const std::string& why) -> absl::StatusOr<bool> {
    batch.done[i].done = ErrorDone(call, "refused", why);
    ChildAgentReport* child = batch.done[i].done.report.mutable_child();
    child->set_agent_id(agent.agent_id);
    child->set_description(agent.args.description);
    child->set_depth(host_.depth + 1);
    child->set_outcome(absl::StrCat("refused: ", why));
    view.ShowToolOutcome({call.id(), kTaskTool, why, true});
    RETURN_IF_ERROR(host_.parts.audit->Record(
        MakeEvent("child_refused", kTaskTool, agent.agent_id, "refused", why)));
    return false;
  };
  const std::string no_lease = absl::StrCat(
      "token budget: no lease for a child agent (", set.left(),
      " tokens left, ", floor, " kept for this agent's own next request",
      first > 0 ? absl::StrCat("; its first request needs ", first) : "",
      "); the task did not run. Do the work yourself or answer with what "
      "you have.");
  if (limit < first) return refuse(no_lease);
  ASSIGN_OR_RETURN(budget::BudgetClient::Child opened,
                   host_.parts.budget->OpenChild(limit, agent.agent_id));
  if (!opened.opened.granted()) return refuse(no_lease);
  agent.ledger_id = opened.opened.child();
  agent.lease = opened.opened.lease();
  batch.free = opened.opened.left() - floor;
  ASSIGN_OR_RETURN(agent.budget,
                   budget::BudgetClient::FromFd(opened.channel.Release()));
  if (!settings.worst_case_floor) {
    agent.budget->set_refill([this, &batch, i](int64_t missing) {
      return Refill(batch, i, missing);
    });
  }
  absl::StatusOr<std::unique_ptr<provider::ModelClient>> model =
      provider::ModelClient::Create(host_.parts.model->options());
  if (!model.ok()) {
    budget::ChildReport report;
    report.set_report_id(agent.agent_id);
    RETURN_IF_ERROR(
        host_.parts.budget->CloseChild(agent.ledger_id, report).status());
    return refuse(absl::StrCat("the child's model connection: ",
                               model.status().message()));
  }
  agent.model = std::move(*model);
  agent.interaction = std::make_unique<ChildInteraction>(
      host_.root_interaction, host_.locks.get(), host_.depth + 1);
  agent.audit = std::make_unique<AgentAudit>(host_.session_audit,
                                             host_.locks.get(), agent.agent_id);
  ChildStart start;
  start.parts = host_.parts;
  start.parts.interaction = agent.interaction.get();
  start.parts.audit = agent.audit.get();
  start.parts.budget = agent.budget.get();
  start.parts.model = agent.model.get();
  start.parts.events = nullptr;
  start.parts.journal = nullptr;
  // A child's own check is already behind the lock; the session's is not.
  if (host_.depth == 0 && host_.parts.check_helpers) {
    start.parts.check_helpers = [locks = host_.locks,
                                 check = host_.parts.check_helpers] {
      absl::MutexLock lock(&locks->tools);
      return check();
    };
  }
  start.agent_id = agent.agent_id;
  start.prompt = agent.args.prompt;
  start.cancel = batch.cancel;
  start.lease = agent.lease;
  start.answer_chars = batch.answer_chars;
  RETURN_IF_ERROR(host_.parts.audit->Record(
      MakeEvent("child_start", kTaskTool, agent.agent_id, "start",
                absl::StrCat(OneLineOf(agent.args.description), " (lease ",
                             agent.lease, " tokens)"))));
  ++batch.running;
  agent.thread = std::thread(
      [&agent, &batch, i, start = std::move(start), run = host_.run_child] {
        agent.run = run(start);
        absl::MutexLock lock(&batch.mutex);
        batch.finished.push_back(i);
      });
  return true;
}

absl::StatusOr<TaskDone> ChildAgents::FinishChild(Batch& batch, size_t i) {
  const provider::ToolCall& call = (*batch.calls)[i];
  Child& agent = *batch.agents[i];
  agent.thread.join();
  const absl::StatusOr<TurnOutcome>& ran = agent.run.outcome;
  TurnOutcome outcome = ran.ok() ? *ran : TurnOutcome();
  budget::ChildReport report;
  report.set_report_id(agent.agent_id);
  report.set_reported_tokens(outcome.usage.charged_tokens());
  budget::ChildClosed closed;
  {
    absl::MutexLock pool(&batch.pool);
    --batch.running;
    ASSIGN_OR_RETURN(closed,
                     host_.parts.budget->CloseChild(agent.ledger_id, report));
    batch.free = closed.left() - batch.floor;
  }
  RETURN_IF_ERROR(ran.status());

  TaskDone task;
  task.usage = outcome.usage;
  task.usage.set_charged_tokens(Clamp32(closed.charged()));
  std::string text;
  std::string state;
  bool is_error = false;
  switch (outcome.end) {
    case TurnEnd::kAnswered:
      state = outcome.stopped.empty() ? "answered" : outcome.stopped;
      text = outcome.answer;
      break;
    case TurnEnd::kBudget:
      state = "budget exhausted";
      text = outcome.answer;
      is_error = true;
      break;
    case TurnEnd::kCancelled:
      state = "cancelled";
      text = absl::StrCat(
          "[Garuda: the person cancelled this task.]",
          outcome.answer.empty() ? "" : "\nIts last text: ", outcome.answer);
      is_error = true;
      break;
    case TurnEnd::kFailed:
      state = absl::StrCat("failed: ", outcome.stopped);
      text = absl::StrCat("[Garuda: the task failed: ", outcome.stopped, "]",
                          outcome.answer.empty() ? "" : "\n", outcome.answer);
      is_error = true;
      break;
  }
  bool cut = false;
  // What the parent's model gets: the answer and (today's rule) what the
  // parent has left, so that its model can decide to do the rest itself.
  std::string content;
  if (host_.settings.worst_case_floor) {
    text = CapChildAnswer(text, &cut);
    content = text;
  } else {
    // Cut to what the floor kept for it, measured as the parent's next
    // request carries it.
    const provider::ModelClient* model = host_.parts.model;
    text = CutChildAnswer(
        text, batch.answer_chars,
        [model, is_error](absl::string_view t) {
          return CarriedChars(model, t, is_error);
        },
        &cut);
    content = absl::StrCat(text, BudgetNote(closed.left(), batch.cap));
  }
  const std::string ended =
      absl::StrCat("task ended: ", closed.charged(), " tokens");
  // The description too: parallel children end in any order.
  batch.view->ShowToolOutcome(
      {call.id(), kTaskTool,
       absl::StrCat(ended, " (", OneLineOf(agent.args.description),
                    state == "answered" ? "" : absl::StrCat("; ", state), ")"),
       is_error});
  RETURN_IF_ERROR(host_.parts.audit->Record(MakeEvent(
      "child_end", kTaskTool, agent.agent_id, state,
      absl::StrCat("charged ", closed.charged(), ", returned ",
                   closed.returned(), " of a lease of ", agent.lease))));

  ToolCallDone& done = task.done;
  done.result.set_tool_call_id(call.id());
  done.result.set_content(content);
  done.result.set_is_error(is_error);
  done.report.set_id(call.id());
  done.report.set_tool(kTaskTool);
  done.report.set_arguments_json(call.arguments_json());
  done.report.set_decision(absl::StrCat("child agent ", agent.agent_id,
                                        " at depth ", host_.depth + 1));
  done.report.set_outcome(ended);
  done.report.set_is_error(is_error);
  done.report.set_output(text);
  ChildAgentReport* child = done.report.mutable_child();
  child->set_agent_id(agent.agent_id);
  child->set_description(agent.args.description);
  child->set_depth(host_.depth + 1);
  child->set_outcome(state);
  for (const ToolCallReport& call_report : outcome.tool_calls) {
    *child->add_tool_calls() = call_report;
  }
  *child->mutable_usage() = task.usage;
  child->set_lease_tokens(Clamp32(agent.lease));
  child->set_returned_tokens(Clamp32(closed.returned()));
  child->set_answer_cut(cut);
  (*host_.descriptions)[agent.agent_id] = agent.args.description;
  for (const auto& [id, description] : agent.run.descriptions) {
    (*host_.descriptions)[id] = description;
  }
  *batch.results.add_tool_results() = done.result;
  if (host_.settings.keep_floor && !host_.settings.worst_case_floor) {
    // The answer is measured now, and one fewer is to come: what is above
    // the new floor can go to the children still running.
    absl::MutexLock pool(&batch.pool);
    const int pending = static_cast<int>(batch.queue.size()) + batch.running;
    const int64_t floor = FloorTokens(batch, pending);
    ASSIGN_OR_RETURN(budget::FloorSet set, host_.parts.budget->SetFloor(floor));
    batch.floor = floor;
    batch.free = set.left() - floor;
  }
  return task;
}

bool ChildAgents::Refill(Batch& batch, size_t i, int64_t missing) {
  Child& agent = *batch.agents[i];
  absl::MutexLock pool(&batch.pool);
  // Children not started yet come first; no child passes its own limit.
  if (!batch.all_started || missing <= 0 ||
      agent.lease + missing > host_.settings.child_token_budget) {
    return false;
  }
  // Near the end of the budget the siblings' requests are ordered, not
  // split: this child waits until the whole of what it needs is free (a
  // sibling ended and its rest came back), or gives up when no sibling
  // that is not waiting too could still return anything.
  ++batch.refilling;
  auto ready = [&batch, missing] {
    batch.pool.AssertHeld();
    return batch.free >= missing || batch.running - batch.refilling <= 0;
  };
  batch.pool.Await(absl::Condition(&ready));
  --batch.refilling;
  if (batch.free < missing) return false;
  absl::StatusOr<budget::ChildExtended> extended =
      host_.parts.budget->ExtendChild(agent.ledger_id, missing);
  if (!extended.ok() || !extended->granted()) return false;
  agent.lease = extended->lease();
  batch.free = extended->left() - batch.floor;
  return true;
}

absl::StatusOr<std::vector<TaskDone>> ChildAgents::RunTasks(
    const std::vector<provider::ToolCall>& calls,
    const provider::ChatMessage& known_results, const CancelFlag* cancel) {
  Batch batch;
  batch.calls = &calls;
  batch.cancel = cancel;
  batch.results = known_results;
  batch.done.resize(calls.size());
  batch.agents.resize(calls.size());
  batch.view = std::make_unique<ChildInteraction>(
      host_.root_interaction, host_.locks.get(), host_.depth);
  for (size_t i = 0; i < calls.size(); ++i) {
    absl::StatusOr<TaskArguments> args =
        ParseTaskArguments(calls[i].arguments_json());
    if (!args.ok()) {
      batch.done[i].done = ErrorDone(calls[i], "input check failed",
                                     std::string(args.status().message()));
      batch.view->ShowToolOutcome({calls[i].id(), kTaskTool,
                                   std::string(args.status().message()), true});
      RETURN_IF_ERROR(host_.parts.audit->Record(MakeEvent(
          "tool_call", kTaskTool, OneLineOf(calls[i].arguments_json()),
          "input check failed", args.status().message())));
    } else if (host_.depth >= host_.settings.max_depth) {
      const std::string why =
          absl::StrCat("task is not available at depth ", host_.depth,
                       " (agents.maxDepth is ", host_.settings.max_depth,
                       "): do this work yourself.");
      batch.done[i].done = ErrorDone(calls[i], "refused", why);
      RETURN_IF_ERROR(host_.parts.audit->Record(MakeEvent(
          "tool_call", kTaskTool, OneLineOf(args->description), "deny", why)));
    } else {
      batch.agents[i] = std::make_unique<Child>();
      batch.agents[i]->args = std::move(*args);
      batch.queue.push_back(i);
    }
  }
  if (!batch.queue.empty() && !host_.settings.worst_case_floor) {
    batch.cap = host_.settings.lease;
    if (batch.cap == 0) {
      ASSIGN_OR_RETURN(budget::BudgetStatus status,
                       host_.parts.budget->Status());
      batch.cap = status.limit();
    }
    batch.answer_tokens = budget::AnswerReserveTokens(
        batch.cap, static_cast<int64_t>(batch.queue.size()));
    FloorTokens(batch, 0);  // measures the result message
    const provider::ModelClient* model = host_.parts.model;
    batch.answer_chars = std::min<int64_t>(
        budget::kSubagentResultCapChars,
        batch.answer_tokens * budget::kCharsPerToken -
            batch.empty_result_chars -
            CarriedChars(model,
                         BudgetNote(budget::kMaxTokens, budget::kMaxTokens),
                         false));
  }

  absl::Status first_error;
  auto running = [&batch] {
    absl::MutexLock pool(&batch.pool);
    return batch.running;
  };
  const int max_parallel = std::max(1, host_.settings.max_parallel);
  auto cancelled = [cancel] {
    return cancel != nullptr && cancel->cancelled();
  };
  while (true) {
    bool waiting = false;
    while (!batch.queue.empty() && running() < max_parallel &&
           first_error.ok() && !cancelled() && !waiting) {
      const size_t i = batch.queue.front();
      batch.queue.pop_front();
      absl::StatusOr<bool> started = StartChild(batch, i, &waiting);
      if (!started.ok()) {
        first_error = started.status();
      } else if (waiting) {
        batch.queue.push_front(i);
      }
    }
    {
      absl::MutexLock pool(&batch.pool);
      batch.all_started = batch.queue.empty();
    }
    // Every started child is awaited, also after a failure or a cancel:
    // its reservations stay tracked until it has ended.
    if (running() == 0) break;
    size_t i = 0;
    {
      absl::MutexLock lock(&batch.mutex);
      batch.mutex.Await(absl::Condition(
          +[](std::deque<size_t>* f) { return !f->empty(); }, &batch.finished));
      i = batch.finished.front();
      batch.finished.pop_front();
    }
    absl::StatusOr<TaskDone> task = FinishChild(batch, i);
    if (!task.ok()) {
      if (first_error.ok()) first_error = task.status();
      batch.done[i].done =
          ErrorDone(calls[i], "failed", std::string(task.status().message()));
    } else {
      batch.done[i] = std::move(*task);
    }
  }
  for (size_t i : batch.queue) {
    batch.done[i].done =
        ErrorDone(calls[i], "not run",
                  cancelled() ? "Not run: the person cancelled."
                              : "Not run: the session stopped.");
  }
  if (first_error.ok()) {
    // No child is open now: the floor has nothing left to protect.
    absl::Status reset = host_.parts.budget->SetFloor(0).status();
    if (!reset.ok()) first_error = reset;
  }
  RETURN_IF_ERROR(first_error);
  return std::move(batch.done);
}

}  // namespace agent
}  // namespace garuda
