#include "lib/agent/children.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"
#include "lib/budget/limits.h"
#include "lib/budget/meter.h"
#include "lib/provider/json.h"

namespace garuda {
namespace agent {

std::string OneLineOf(absl::string_view text) {
  std::string line(text.substr(0, 300));
  for (char& c : line) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  return line;
}

ChildSettings ChildSettingsFrom(const AgentSettings& agents,
                                const ModelSettings& model) {
  ChildSettings out;
  if (agents.max_depth() != 0) out.max_depth = agents.max_depth();
  if (agents.max_parallel() != 0) out.max_parallel = agents.max_parallel();
  if (agents.child_token_budget() != 0) {
    out.child_token_budget = static_cast<int64_t>(
        std::min<uint64_t>(agents.child_token_budget(), budget::kMaxTokens));
  }
  if (model.context_window() != 0) out.context_window = model.context_window();
  return out;
}

provider::ToolDefinition TaskToolDefinition() {
  provider::ToolDefinition tool;
  tool.set_name(kTaskTool);
  tool.set_description(
      "Give a self-contained task to a child agent: a fresh conversation "
      "with your tools, rules and permissions, which sees only `prompt` and "
      "answers with one message (at most 20000 characters). Several task "
      "calls in one response run in parallel; their answers come back in "
      "call order. Every child spends from this session's one token budget.");
  tool.set_parameters_json(
      R"({"type":"object","properties":{)"
      R"("description":{"type":"string","description":"a few words, shown to the person"},)"
      R"("prompt":{"type":"string","description":"the child's whole instructions"}},)"
      R"("required":["description","prompt"],"additionalProperties":false})");
  return tool;
}

ToolRow TaskRow() {
  provider::ToolDefinition definition = TaskToolDefinition();
  ToolRow row;
  row.spec.name = definition.name();
  row.spec.description = definition.description();
  row.spec.schema = [json = definition.parameters_json()](ToolProfile) {
    return json;
  };
  row.spec.kind = ToolKind::kThink;
  row.batched = true;
  return row;
}

absl::StatusOr<TaskArguments> ParseTaskArguments(absl::string_view json) {
  absl::StatusOr<provider::Value> parsed =
      provider::ParseJson(json, "task arguments");
  if (!parsed.ok() ||
      parsed->kind_case() != google::protobuf::Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(
        "task needs {\"description\": string, \"prompt\": string}",
        parsed.ok() ? "" : absl::StrCat(": ", parsed.status().message())));
  }
  TaskArguments out;
  for (const auto& [key, value] : parsed->struct_value().fields()) {
    std::string* field = key == "description" ? &out.description
                         : key == "prompt"    ? &out.prompt
                                              : nullptr;
    if (field == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("task has no argument \"", OneLineOf(key),
                       "\"; it takes description and prompt"));
    }
    if (value.kind_case() != google::protobuf::Value::kStringValue) {
      return absl::InvalidArgumentError(
          absl::StrCat("task's \"", key, "\" must be a string"));
    }
    *field = value.string_value();
  }
  if (out.description.empty() || out.prompt.empty()) {
    return absl::InvalidArgumentError(
        "task needs a non-empty \"description\" and \"prompt\"");
  }
  return out;
}

std::string ChildPromptNote(int64_t answer_chars) {
  return absl::StrCat(
      kChildPromptMark,
      ": another agent gave you the task in the first message. Work on it "
      "with your tools; your last message is your whole answer to that "
      "agent (it sees nothing else), so put your findings in it. Keep it "
      "under ",
      answer_chars > 0 ? answer_chars : budget::kSubagentResultCapChars,
      " characters: a longer answer is cut there.");
}

std::string CapChildAnswer(absl::string_view answer, bool* cut) {
  return CutChildAnswer(
      answer, budget::kSubagentResultCapChars,
      [](absl::string_view text) { return static_cast<int64_t>(text.size()); },
      cut);
}

std::string CutChildAnswer(absl::string_view answer, int64_t limit,
                           const CarriedSize& carried, bool* cut) {
  *cut = carried(answer) > limit;
  if (!*cut) return std::string(answer);
  const std::string note =
      absl::StrCat("\n[Garuda: the child's answer was cut at ", limit,
                   " characters; ", answer.size(), " were sent.]");
  // Back to the start of a UTF-8 sequence.
  auto boundary = [&](size_t keep) {
    while (keep > 0 &&
           (static_cast<unsigned char>(answer[keep]) & 0xC0) == 0x80) {
      --keep;
    }
    return keep;
  };
  // The longest head that fits with the note: the carried size grows with
  // the head (whole characters only), so a bisection finds it.
  size_t fits = 0;
  size_t too_long = answer.size();
  while (too_long - fits > 1) {
    const size_t mid = fits + (too_long - fits) / 2;
    if (carried(absl::StrCat(answer.substr(0, boundary(mid)), note)) <= limit) {
      fits = mid;
    } else {
      too_long = mid;
    }
  }
  return absl::StrCat(answer.substr(0, boundary(fits)), note);
}

// ---- ChildInteraction ----

bool ChildInteraction::CanAsk() const {
  absl::MutexLock lock(&locks_->display);
  return root_->CanAsk();
}

void ChildInteraction::ShowRetry(absl::string_view reason) {
  ShowNotice(absl::StrCat("retry: ", reason));
}

void ChildInteraction::ShowToolCall(const ToolCallView& call) {
  absl::MutexLock lock(&locks_->display);
  if (indent_.empty()) {
    root_->ShowToolCall(call);
    return;
  }
  root_->ShowNotice(absl::StrCat(
      indent_, "-> ", call.summary.empty() ? call.tool : call.summary));
}

void ChildInteraction::ShowToolOutcome(const ToolOutcomeView& outcome) {
  absl::MutexLock lock(&locks_->display);
  if (indent_.empty()) {
    root_->ShowToolOutcome(outcome);
    return;
  }
  root_->ShowNotice(absl::StrCat(indent_, "   ",
                                 outcome.is_error ? "error: " : "",
                                 OneLineOf(outcome.outcome)));
}

void ChildInteraction::ShowNotice(absl::string_view line) {
  absl::MutexLock lock(&locks_->display);
  root_->ShowNotice(absl::StrCat(indent_, line));
}

void ChildInteraction::ShowCommandProgress(const CommandProgress& progress) {
  absl::MutexLock lock(&locks_->display);
  root_->ShowCommandProgress(progress);
}

void ChildInteraction::HandOverTerminal() {
  absl::MutexLock lock(&locks_->display);
  root_->HandOverTerminal();
}

void ChildInteraction::TakeBackTerminal() {
  absl::MutexLock lock(&locks_->display);
  root_->TakeBackTerminal();
}

PermissionAnswer ChildInteraction::AskPermission(
    const PermissionQuestion& question) {
  absl::MutexLock lock(&locks_->display);
  return root_->AskPermission(question);
}

Answer ChildInteraction::AskChangeSet(const ChangeSet& change_set,
                                      const Rendered& rendered) {
  absl::MutexLock lock(&locks_->display);
  return root_->AskChangeSet(change_set, rendered);
}

bool ChildInteraction::RelaysAnswers() const {
  absl::MutexLock lock(&locks_->display);
  return root_->RelaysAnswers();
}

PermissionAnswer ChildInteraction::AskEdit(const PermissionQuestion& question,
                                           const ChangeSet& change_set) {
  absl::MutexLock lock(&locks_->display);
  return root_->AskEdit(question, change_set);
}

absl::Status AgentAudit::Record(const audit::AuditEvent& event) {
  absl::MutexLock lock(&locks_->audit);
  if (agent_id_.empty()) return inner_->Record(event);
  audit::AuditEvent tagged = event;
  (*tagged.mutable_fields()->mutable_fields())["agent"].set_string_value(
      agent_id_);
  return inner_->Record(tagged);
}

// ---- The parent's side of its children (Session's members) ----

// One started child: everything it owns, for as long as its thread runs.
}  // namespace agent
}  // namespace garuda
