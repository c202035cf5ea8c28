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
namespace {

// A diff shows files up to this size, and one question's diffs up to the
// total, so that a message stays far below the line limit (kMaxLineBytes);
// what is left out is named in the change list's text.
constexpr size_t kDiffFileBytes = 256 * 1024;
constexpr size_t kDiffTotalBytes = 1024 * 1024;

Value Option(absl::string_view id, absl::string_view name,
             absl::string_view kind) {
  Value option = Object();
  Set(option, "optionId", Str(id));
  Set(option, "name", Str(name));
  Set(option, "kind", Str(kind));
  return option;
}

std::string JoinPathUnder(const std::string& root, const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  return absl::StrCat(root, "/", path);
}

}  // namespace

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
    : link_(link), project_(project), token_limit_(token_limit) {}

std::string AcpInteraction::TakeNotices() {
  std::string notices = std::move(notices_);
  notices_.clear();
  return notices;
}

void AcpInteraction::Update(Value update) {
  Value params = Object();
  Set(params, "sessionId", Str(session_id_));
  Set(params, "update", std::move(update));
  link_->Notify("session/update", params);
}

Value AcpInteraction::TextBlock(absl::string_view text) {
  Value block = Object();
  Set(block, "type", Str("text"));
  Set(block, "text", Str(text));
  return block;
}

// A ToolCallContent of text.
Value AcpInteraction::TextContent(absl::string_view text) {
  Value content = Object();
  Set(content, "type", Str("content"));
  Set(content, "content", TextBlock(text));
  return content;
}

void AcpInteraction::ShowText(absl::string_view text) {
  if (text.empty()) return;
  Value update = Object();
  Set(update, "sessionUpdate", Str("agent_message_chunk"));
  Set(update, "content", TextBlock(text));
  Update(std::move(update));
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
  if (current_call_.empty()) return;
  // An editor redraws the whole call for each update: once a second is
  // enough to follow it.
  if (progress.elapsed < progress_shown_ + absl::Seconds(1)) return;
  progress_shown_ = progress.elapsed;
  Value update = Object();
  Set(update, "sessionUpdate", Str("tool_call_update"));
  Set(update, "toolCallId", Str(current_call_));
  Set(update, "status", Str("in_progress"));
  Value content = List();
  Append(content,
         TextContent(absl::StrCat(
             "running ", absl::ToInt64Seconds(progress.elapsed), " s",
             progress.last_line.empty() ? "" : ": ", progress.last_line)));
  Set(update, "content", std::move(content));
  Update(std::move(update));
}

void AcpInteraction::ToolCall(const provider::ToolCall& call) {
  calls_[call.id()] = call;
}

void AcpInteraction::ShowToolCall(const agent::ToolCallView& view) {
  current_call_ = view.id;
  progress_shown_ = absl::ZeroDuration();
  Value update = Object();
  Set(update, "sessionUpdate", Str("tool_call"));
  Set(update, "toolCallId", Str(view.id));
  Set(update, "kind", Str(tools_->KindName(view.tool)));
  Set(update, "status", Str("in_progress"));
  std::string title = view.summary;
  auto call = calls_.find(view.id);
  if (call != calls_.end()) {
    ToolCallFields fields = FieldsOf(*tools_, call->second, project_->root());
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
  Update(std::move(update));
}

void AcpInteraction::ToolResult(const agent::ToolCallReport& report) {
  Value update = Object();
  Set(update, "sessionUpdate", Str("tool_call_update"));
  Set(update, "toolCallId", Str(report.id()));
  Set(update, "status", Str(report.is_error() ? "failed" : "completed"));
  Value content = List();
  auto diff = diffs_.find(report.id());
  if (diff != diffs_.end() && !report.is_error()) {
    for (const Value& block : diff->second.list_value().values()) {
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
  Update(std::move(update));
  calls_.erase(report.id());
  diffs_.erase(report.id());
}

void AcpInteraction::Usage(const agent::UsageReport& usage) {
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
  Update(std::move(update));
}

std::optional<std::string> AcpInteraction::OldText(
    const std::string& relative) const {
  // Read as the read tools read: beneath the project only (links followed
  // only while they stay inside), never a FIFO or a device.
  absl::StatusOr<OpenedPath> opened = project_->OpenForRead(relative);
  if (!opened.ok()) {
    if (absl::IsNotFound(opened.status())) return std::string();  // new
    return std::nullopt;
  }
  struct stat st;
  if (opened->is_folder || ::fstat(opened->fd.get(), &st) != 0 ||
      !S_ISREG(st.st_mode)) {
    return std::nullopt;
  }
  absl::StatusOr<std::string> text =
      ReadUpTo(opened->fd.get(), relative, kDiffFileBytes);
  if (!text.ok()) return std::nullopt;
  return *std::move(text);
}

Value AcpInteraction::Diffs(const ChangeSet& change_set) {
  Value diffs = List();
  size_t total = 0;
  for (const Change& change : change_set.changes) {
    const ChangeEntry& entry = change.entry;
    const bool removed = entry.new_type() == FILE_TYPE_ABSENT;
    const bool regular = entry.new_type() == FILE_TYPE_REGULAR;
    if (!removed && !(regular && change.content.size() == entry.size() &&
                      entry.size() <= kDiffFileBytes)) {
      continue;  // named in the summary text only
    }
    // A file whose present content cannot be shown (too large, not a
    // regular file) is named in the text only: a diff without its old
    // side would look like a new file.
    std::optional<std::string> old_or = OldText(entry.path());
    if (!old_or) continue;
    const std::string& old_text = *old_or;
    total += old_text.size() + change.content.size();
    if (total > kDiffTotalBytes) break;
    Value diff = Object();
    Set(diff, "type", Str("diff"));
    Set(diff, "path", Str(JoinPathUnder(project_->root(), entry.path())));
    Set(diff, "oldText",
        old_text.empty() && entry.kind() == CHANGE_KIND_ADDED ? Null()
                                                              : Str(old_text));
    Set(diff, "newText", Str(removed ? "" : change.content));
    Append(diffs, std::move(diff));
  }
  return diffs;
}

std::optional<std::string> AcpInteraction::RequestPermission(Value tool_call,
                                                             Value options) {
  Value params = Object();
  Set(params, "sessionId", Str(session_id_));
  Set(params, "toolCall", std::move(tool_call));
  Set(params, "options", std::move(options));
  return link_->RequestPermission(params);
}

PermissionAnswer AcpInteraction::Ask(const PermissionQuestion& question,
                                     Value content) {
  Value tool_call = Object();
  Set(tool_call, "toolCallId",
      Str(current_call_.empty() ? "question" : current_call_));
  Set(tool_call, "title", Str(question.summary));
  Set(tool_call, "content", std::move(content));
  Value options = List();
  Append(options, Option("allow_once", "Allow once", "allow_once"));
  if (question.session_rule) {
    Append(options, Option("allow_always",
                           absl::StrCat("Allow always in this session (",
                                        *question.session_rule, ")"),
                           "allow_always"));
  }
  Append(options, Option("reject_once", "Reject", "reject_once"));
  std::optional<std::string> selected =
      RequestPermission(std::move(tool_call), std::move(options));
  if (selected == "allow_once") return PermissionAnswer::kYes;
  if (selected == "allow_always" && question.session_rule) {
    return PermissionAnswer::kYesForSession;
  }
  return PermissionAnswer::kNo;
}

PermissionAnswer AcpInteraction::AskPermission(
    const PermissionQuestion& question) {
  Value content = List();
  if (!question.detail.empty()) Append(content, TextContent(question.detail));
  return Ask(question, std::move(content));
}

PermissionAnswer AcpInteraction::AskEdit(const PermissionQuestion& question,
                                         const ChangeSet& change_set) {
  Value diffs = Diffs(change_set);
  Value content = diffs;
  if (diffs.list_value().values().empty() && !question.detail.empty()) {
    Append(content, TextContent(question.detail));
  }
  PermissionAnswer answer = Ask(question, std::move(content));
  if (answer != PermissionAnswer::kNo && !current_call_.empty()) {
    diffs_[current_call_] = std::move(diffs);
  }
  return answer;
}

Answer AcpInteraction::AskChangeSet(const ChangeSet& change_set,
                                    const Rendered& rendered) {
  const bool complete =
      !change_set.summary.incomplete() && change_set.summary.refused().empty();
  Value content = List();
  Append(content, TextContent(rendered.summary));
  Value diffs = Diffs(change_set);
  for (const Value& diff : diffs.list_value().values()) Append(content, diff);
  if (diffs.list_value().values().size() < change_set.changes.size() &&
      !rendered.diff.empty()) {
    Append(content, TextContent(rendered.diff));
  }
  Value tool_call = Object();
  Set(tool_call, "toolCallId",
      Str(current_call_.empty() ? "changes" : current_call_));
  Set(tool_call, "title",
      Str(complete ? "Apply the command's changes to the project?"
                   : "The command's change list is incomplete: it can only "
                     "be discarded"));
  Set(tool_call, "content", std::move(content));
  Value options = List();
  // An incomplete list is never applied, so it is not offered.
  if (complete) Append(options, Option("apply", "Apply", "allow_once"));
  Append(options, Option("discard", "Discard", "reject_once"));
  std::optional<std::string> selected =
      RequestPermission(std::move(tool_call), std::move(options));
  if (selected == "apply" && complete) {
    if (!current_call_.empty()) diffs_[current_call_] = std::move(diffs);
    return Answer::kApply;
  }
  return Answer::kDiscard;
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

void AcpInteraction::Replay(
    const std::vector<provider::ChatMessage>& messages) {
  for (const provider::ChatMessage& message : messages) {
    if (!message.text().empty()) {
      Value update = Object();
      Set(update, "sessionUpdate",
          Str(message.role() == "assistant" ? "agent_message_chunk"
                                            : "user_message_chunk"));
      Set(update, "content", TextBlock(ReplayText(message.text())));
      Update(std::move(update));
    }
    for (const provider::ToolCall& call : message.tool_calls()) {
      ToolCallFields fields = FieldsOf(*tools_, call, project_->root());
      Value update = Object();
      Set(update, "sessionUpdate", Str("tool_call"));
      Set(update, "toolCallId", Str(call.id()));
      Set(update, "title", Str(fields.title));
      Set(update, "kind", Str(tools_->KindName(call.name())));
      Set(update, "status", Str("completed"));
      Set(update, "rawInput", std::move(fields.raw_input));
      Update(std::move(update));
    }
    for (const provider::ToolResult& result : message.tool_results()) {
      Value update = Object();
      Set(update, "sessionUpdate", Str("tool_call_update"));
      Set(update, "toolCallId", Str(result.tool_call_id()));
      Set(update, "status", Str(result.is_error() ? "failed" : "completed"));
      Value content = List();
      Append(content, TextContent(ReplayText(result.content())));
      Set(update, "content", std::move(content));
      Update(std::move(update));
    }
  }
}

}  // namespace acp
}  // namespace garuda
