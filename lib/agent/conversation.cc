#include "lib/agent/conversation.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace garuda {
namespace agent {

void Conversation::Restore(std::vector<provider::ChatMessage> messages) {
  messages_ = std::move(messages);
  if (!messages_.empty() && messages_.back().role() == "assistant" &&
      messages_.back().tool_calls_size() > 0) {
    provider::ChatMessage results;
    results.set_role("user");
    for (const provider::ToolCall& call : messages_.back().tool_calls()) {
      provider::ToolResult* result = results.add_tool_results();
      result->set_tool_call_id(call.id());
      result->set_content("Not run: the session ended before this call ran.");
      result->set_is_error(true);
    }
    Add(std::move(results)).IgnoreError();
  }
}

absl::Status Conversation::Add(provider::ChatMessage message) {
  messages_.push_back(message);
  if (journal_ == nullptr) return absl::OkStatus();
  JournalRecord record;
  *record.mutable_message() = std::move(message);
  return Journaled(record);
}

absl::Status Conversation::Journaled(const JournalRecord& record) {
  if (journal_ == nullptr) return absl::OkStatus();
  absl::Status written = journal_->Append(record);
  if (!written.ok()) {
    return absl::Status(
        written.code(),
        absl::StrCat("writing the session journal ", journal_->path(), ": ",
                     written.message()));
  }
  return absl::OkStatus();
}

absl::Status Conversation::NoteForModel(const std::string& note) {
  provider::ChatMessage message;
  message.set_role("user");
  message.set_text(note);
  if (!messages_.empty() && messages_.back().role() == "user") {
    // Journaled as its own user message; merged in memory, and merged again
    // by ReadConversation's reader when resumed.
    provider::ChatMessage& last = messages_.back();
    last.set_text(
        last.text().empty() ? note : absl::StrCat(last.text(), "\n\n", note));
    if (journal_ == nullptr) return absl::OkStatus();
    JournalRecord record;
    *record.mutable_message() = message;
    return journal_->Append(record);
  }
  return Add(std::move(message));
}

absl::Status Conversation::Compacted(provider::ChatMessage summary,
                                     int64_t previous_context_tokens) {
  JournalRecord record;
  *record.mutable_compaction()->mutable_summary() = summary;
  record.mutable_compaction()->set_previous_context_tokens(
      previous_context_tokens);
  absl::Status journaled = Journaled(record);
  if (!journaled.ok()) return journaled;
  messages_.clear();
  messages_.push_back(std::move(summary));
  return absl::OkStatus();
}

absl::Status Conversation::Clear() {
  messages_.clear();
  if (journal_ == nullptr) return absl::OkStatus();
  JournalRecord record;
  record.mutable_clear();
  return journal_->Append(record);
}

}  // namespace agent
}  // namespace garuda
