#include "lib/acp/acp_questions.h"

#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/files.h"

namespace garuda {
namespace acp {
namespace {

// A diff shows files up to this size, and one question's diffs up to the
// total, so that a message stays far below the line limit (kMaxLineBytes);
// what is left out is named in the change list's text.
constexpr size_t kDiffFileBytes = 256 * 1024;
constexpr size_t kDiffTotalBytes = 1024 * 1024;

}  // namespace

std::optional<std::string> PermissionQuestions::OldText(
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

Value PermissionQuestions::Diffs(const ChangeSet& change_set) {
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

PermissionAnswer PermissionQuestions::Ask(const std::string& call_id,
                                          const PermissionQuestion& question,
                                          Value content) {
  Value tool_call = Object();
  Set(tool_call, "toolCallId", Str(call_id.empty() ? "question" : call_id));
  Set(tool_call, "title", Str(question.summary));
  Set(tool_call, "content", std::move(content));
  Value options = List();
  Append(options, PermissionOption("allow_once", "Allow once", "allow_once"));
  if (question.session_rule) {
    Append(options,
           PermissionOption("allow_always",
                            absl::StrCat("Allow always in this session (",
                                         *question.session_rule, ")"),
                            "allow_always"));
  }
  Append(options, PermissionOption("reject_once", "Reject", "reject_once"));
  std::optional<std::string> selected =
      updates_->RequestPermission(std::move(tool_call), std::move(options));
  if (selected == "allow_once") return PermissionAnswer::kYes;
  if (selected == "allow_always" && question.session_rule) {
    return PermissionAnswer::kYesForSession;
  }
  return PermissionAnswer::kNo;
}

PermissionAnswer PermissionQuestions::AskPermission(
    const std::string& call_id, const PermissionQuestion& question) {
  Value content = List();
  if (!question.detail.empty()) Append(content, TextContent(question.detail));
  return Ask(call_id, question, std::move(content));
}

PermissionAnswer PermissionQuestions::AskEdit(
    const std::string& call_id, const PermissionQuestion& question,
    const ChangeSet& change_set) {
  Value diffs = Diffs(change_set);
  Value content = diffs;
  if (diffs.list_value().values().empty() && !question.detail.empty()) {
    Append(content, TextContent(question.detail));
  }
  PermissionAnswer answer = Ask(call_id, question, std::move(content));
  if (answer != PermissionAnswer::kNo && !call_id.empty()) {
    diffs_[call_id] = std::move(diffs);
  }
  return answer;
}

Answer PermissionQuestions::AskChangeSet(const std::string& call_id,
                                         const ChangeSet& change_set,
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
  Set(tool_call, "toolCallId", Str(call_id.empty() ? "changes" : call_id));
  Set(tool_call, "title",
      Str(complete ? "Apply the command's changes to the project?"
                   : "The command's change list is incomplete: it can only "
                     "be discarded"));
  Set(tool_call, "content", std::move(content));
  Value options = List();
  // An incomplete list is never applied, so it is not offered.
  if (complete)
    Append(options, PermissionOption("apply", "Apply", "allow_once"));
  Append(options, PermissionOption("discard", "Discard", "reject_once"));
  std::optional<std::string> selected =
      updates_->RequestPermission(std::move(tool_call), std::move(options));
  if (selected == "apply" && complete) {
    if (!call_id.empty()) diffs_[call_id] = std::move(diffs);
    return Answer::kApply;
  }
  return Answer::kDiscard;
}

Value PermissionQuestions::TakeDiffs(const std::string& call_id) {
  auto it = diffs_.find(call_id);
  if (it == diffs_.end()) return List();
  Value diffs = std::move(it->second);
  diffs_.erase(it);
  return diffs;
}

}  // namespace acp
}  // namespace garuda
