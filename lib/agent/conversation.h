// One agent's conversation as the model sees it, written to the session's
// journal as it grows (lib/agent/journal.h), so that --resume continues it.
// The turn loop, compaction, /clear and the notes for the model change it
// only here.
#ifndef GARUDA_LIB_AGENT_CONVERSATION_H_
#define GARUDA_LIB_AGENT_CONVERSATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/agent/journal.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

class Conversation {
 public:
  // `journal` (not owned) may be null: nothing is written.
  explicit Conversation(Journal* journal) : journal_(journal) {}

  const std::vector<provider::ChatMessage>& messages() const {
    return messages_;
  }

  // Continues a resumed conversation (ReadConversation): calls left
  // without a result by an ended session get one saying they did not run.
  void Restore(std::vector<provider::ChatMessage> messages);

  // Appends `message` and journals it; an error names the journal's file.
  absl::Status Add(provider::ChatMessage message);

  // A note for the model: merged into the last user message (a prompt or
  // the results of the last calls) when there is one, else a user message
  // of its own. Journaled as its own user message either way (the reader
  // merges it again on --resume).
  absl::Status NoteForModel(const std::string& note);

  // Replaces the conversation by `summary`, journaled as a compaction of
  // `previous_context_tokens`.
  absl::Status Compacted(provider::ChatMessage summary,
                         int64_t previous_context_tokens);

  // /clear: a new conversation; the journal says so.
  absl::Status Clear();

 private:
  absl::Status Journaled(const JournalRecord& record);

  Journal* journal_;
  std::vector<provider::ChatMessage> messages_;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_CONVERSATION_H_
