// Session's side of its child agents (child_agents.h): what its children
// need of it (ForChildren), a child's own Session, and a child's wrap-up
// request.
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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

namespace garuda {
namespace agent {
namespace {

constexpr char kWrapUpNote[] =
    "[Garuda: your token budget cannot cover another step. Answer now with "
    "your findings so far, in one message, without tool calls.]";

}  // namespace

ChildHost Session::ForChildren() {
  ChildHost host;
  host.settings = config_.agents;
  host.depth = depth_;
  host.agent_id = agent_id_;
  host.parts = parts_;
  host.locks = locks_;
  host.root_interaction = root_interaction_;
  host.session_audit = session_audit_;
  host.next_request = [this] {
    // During an answer's calls the last message is that answer: what came
    // before it is what the provider counted for the last request.
    const size_t messages = conversation_.messages().size();
    return requests_.Next(0, messages > 0 ? messages - 1 : 0);
  };
  host.last_reservation =
      turn_meter_ != nullptr ? turn_meter_->last_reserved() : 0;
  host.last_input_tokens = requests_.last_input_tokens();
  host.children_started = &children_started_;
  host.descriptions = &descriptions_;
  host.run_child = [this](const ChildStart& start) {
    std::unique_ptr<Session> child(
        new Session(*this, start.parts, start.agent_id));
    child->config_.agents.lease = start.lease;
    child->config_.agents.answer_chars = start.answer_chars;
    child->system_prompt_ = absl::StrCat(child->system_prompt_,
                                         ChildPromptNote(start.answer_chars));
    ChildRun run;
    run.outcome = child->RunTurn(start.prompt, start.cancel);
    run.descriptions = child->descriptions_;
    return run;
  };
  return host;
}

Session::Session(const Session& parent, SessionParts parts,
                 std::string agent_id)
    : config_(parent.config_),
      parts_(std::move(parts)),
      // Its note is added when it starts (ForChildren), with its limit.
      system_prompt_(parent.system_prompt_.substr(
          0, parent.system_prompt_.find(kChildPromptMark))),
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
  // As the parent will measure it (FinishChild).
  const ChildSettings& agents = config_.agents;
  const provider::ModelClient* model = parts_.model;
  auto too_long = [&agents, model](const std::string& json) {
    if (agents.worst_case_floor || agents.answer_chars <= 0) {
      return json.size() > static_cast<size_t>(budget::kSubagentResultCapChars);
    }
    return CarriedChars(model, json, true) > agents.answer_chars;
  };
  while (too_long(MessageToJsonLine(result))) {
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
