#include "lib/acp/acp_interaction.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/agent/builtin_rows.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/provider/json.h"
#include "lib/tools/edit_tools.h"

namespace garuda {
namespace acp {
namespace {}  // namespace

const ToolTable& BuiltinToolRows() {
  static const ToolTable* const table =
      new ToolTable(agent::BuiltinToolTable({}));
  return *table;
}

ToolCallFields FieldsOf(const ToolTable& tools, const provider::ToolCall& call,
                        const std::string& root) {
  ToolCallFields fields;
  fields.title = call.name();
  fields.raw_input = Null();
  absl::StatusOr<Value> parsed =
      provider::ParseJson(call.arguments_json(), "the call's arguments");
  if (parsed.ok() && parsed->kind_case() == Value::kStructValue) {
    const Value& input = *parsed;
    fields.raw_input = input;
    if (std::optional<std::string> path = StringField(input, "path")) {
      fields.locations.push_back(JoinPathUnder(root, *path));
      fields.title = absl::StrCat(call.name(), " ", *path);
    }
    const ToolRow* row = tools.Find(call.name());
    if (row != nullptr && row->spec.title) {
      if (std::optional<std::string> title = row->spec.title(input)) {
        fields.title = *title;
      }
    }
  }
  return fields;
}

AcpInteraction::AcpInteraction(WorkerLink* link, const Project* project,
                               int64_t token_limit)
    : updates_(link),
      project_(project),
      questions_(&updates_, project),
      events_(&updates_, &calls_, &questions_, project, token_limit) {}

std::string AcpInteraction::TakeNotices() {
  std::string notices = std::move(notices_);
  notices_.clear();
  return notices;
}

void AcpInteraction::ShowText(absl::string_view text) {
  if (text.empty()) return;
  Value update = Object();
  Set(update, "sessionUpdate", Str("agent_message_chunk"));
  Set(update, "content", TextBlock(text));
  updates_.Send(std::move(update));
}

void AcpInteraction::ShowRetry(absl::string_view reason) {
  ShowText(absl::StrCat("\n[retrying: ", reason, "]\n"));
}

void AcpInteraction::ShowNotice(absl::string_view line) {
  if (!in_turn_) {
    absl::StrAppend(&notices_, line, "\n");
    return;
  }
  ShowText(absl::StrCat("\n", line, "\n"));
}

void AcpInteraction::ShowCommandProgress(
    const agent::CommandProgress& progress) {
  if (calls_.current.empty()) return;
  // An editor redraws the whole call for each update: once a second is
  // enough to follow it.
  if (progress.elapsed < progress_shown_ + absl::Seconds(1)) return;
  progress_shown_ = progress.elapsed;
  Value update = Object();
  Set(update, "sessionUpdate", Str("tool_call_update"));
  Set(update, "toolCallId", Str(calls_.current));
  Set(update, "status", Str("in_progress"));
  Value content = List();
  Append(content,
         TextContent(absl::StrCat(
             "running ", absl::ToInt64Seconds(progress.elapsed), " s",
             progress.last_line.empty() ? "" : ": ", progress.last_line)));
  Set(update, "content", std::move(content));
  updates_.Send(std::move(update));
}

void AcpInteraction::ShowToolCall(const agent::ToolCallView& view) {
  calls_.current = view.id;
  progress_shown_ = absl::ZeroDuration();
  Value update = Object();
  Set(update, "sessionUpdate", Str("tool_call"));
  Set(update, "toolCallId", Str(view.id));
  Set(update, "kind", Str(calls_.tools->KindName(view.tool)));
  Set(update, "status", Str("in_progress"));
  std::string title = view.summary;
  auto call = calls_.by_id.find(view.id);
  if (call != calls_.by_id.end()) {
    ToolCallFields fields =
        FieldsOf(*calls_.tools, call->second, project_->root());
    if (title.empty()) title = fields.title;
    Value locations = List();
    for (const std::string& path : fields.locations) {
      Value location = Object();
      Set(location, "path", Str(path));
      Append(locations, std::move(location));
    }
    Set(update, "locations", std::move(locations));
    Set(update, "rawInput", std::move(fields.raw_input));
  }
  Set(update, "title", Str(title.empty() ? view.tool : title));
  updates_.Send(std::move(update));
}

void AcpTurnEvents::ToolCall(const provider::ToolCall& call) {
  calls_->by_id[call.id()] = call;
}

void AcpTurnEvents::ToolResult(const agent::ToolCallReport& report) {
  Value update = Object();
  Set(update, "sessionUpdate", Str("tool_call_update"));
  Set(update, "toolCallId", Str(report.id()));
  Set(update, "status", Str(report.is_error() ? "failed" : "completed"));
  Value content = List();
  Value diffs = questions_->TakeDiffs(report.id());
  if (!report.is_error()) {
    for (const Value& block : diffs.list_value().values()) {
      Append(content, block);
    }
  }
  std::string text =
      report.output().empty() ? report.outcome() : report.output();
  if (!text.empty()) Append(content, TextContent(text));
  Set(update, "content", std::move(content));
  Value raw = Object();
  Set(raw, "decision", Str(report.decision()));
  Set(raw, "outcome", Str(report.outcome()));
  Set(update, "rawOutput", std::move(raw));
  updates_->Send(std::move(update));
  calls_->by_id.erase(report.id());
}

void AcpTurnEvents::Usage(const agent::UsageReport& usage) {
  Value update = Object();
  Set(update, "sessionUpdate", Str("usage_update"));
  // What the budget charged so far in this session (since it was opened
  // here), against the session's token limit (0: no limit).
  session_used_ = turn_base_ + usage.charged_tokens();
  Set(update, "used", Num(static_cast<double>(session_used_)));
  Set(update, "size", Num(static_cast<double>(token_limit_)));
  Value garuda = Object();
  Set(garuda, "inputTokens", Num(usage.input_tokens()));
  Set(garuda, "outputTokens", Num(usage.output_tokens()));
  Set(garuda, "chargedTokens", Num(usage.charged_tokens()));
  Set(garuda, "requests", Num(usage.requests()));
  Value meta = Object();
  Set(meta, "garuda", std::move(garuda));
  Set(update, "_meta", std::move(meta));
  updates_->Send(std::move(update));
}

namespace {

// A replayed message's text is cut here (a prompt may have embedded whole
// files); the model still has all of it.
constexpr size_t kReplayTextBytes = 256 * 1024;

std::string ReplayText(const std::string& text) {
  if (text.size() <= kReplayTextBytes) return text;
  return absl::StrCat(text.substr(0, kReplayTextBytes), "\n[",
                      text.size() - kReplayTextBytes,
                      " more bytes not replayed]");
}

}  // namespace

void AcpTurnEvents::Replay(const std::vector<provider::ChatMessage>& messages) {
  for (const provider::ChatMessage& message : messages) {
    if (!message.text().empty()) {
      Value update = Object();
      Set(update, "sessionUpdate",
          Str(message.role() == "assistant" ? "agent_message_chunk"
                                            : "user_message_chunk"));
      Set(update, "content", TextBlock(ReplayText(message.text())));
      updates_->Send(std::move(update));
    }
    for (const provider::ToolCall& call : message.tool_calls()) {
      ToolCallFields fields = FieldsOf(*calls_->tools, call, project_->root());
      Value update = Object();
      Set(update, "sessionUpdate", Str("tool_call"));
      Set(update, "toolCallId", Str(call.id()));
      Set(update, "title", Str(fields.title));
      Set(update, "kind", Str(calls_->tools->KindName(call.name())));
      Set(update, "status", Str("completed"));
      Set(update, "rawInput", std::move(fields.raw_input));
      updates_->Send(std::move(update));
    }
    for (const provider::ToolResult& result : message.tool_results()) {
      Value update = Object();
      Set(update, "sessionUpdate", Str("tool_call_update"));
      Set(update, "toolCallId", Str(result.tool_call_id()));
      Set(update, "status", Str(result.is_error() ? "failed" : "completed"));
      Value content = List();
      Append(content, TextContent(ReplayText(result.content())));
      Set(update, "content", std::move(content));
      updates_->Send(std::move(update));
    }
  }
}

}  // namespace acp
}  // namespace garuda
