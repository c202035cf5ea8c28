#include "lib/agent/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace agent {

std::string NewSessionId(absl::Time now) {
  std::random_device random;
  return absl::StrCat(
      absl::FormatTime("%Y%m%dT%H%M%S", now, absl::UTCTimeZone()), "-",
      ::getpid(), "-", absl::StrFormat("%06x", random() & 0xffffff));
}

absl::StatusOr<std::string> SessionJournalPath(const std::string& home,
                                               const std::string& session_id) {
  ASSIGN_OR_RETURN(std::string folder, GarudaSessionFolder(home, session_id));
  return SessionJournalFile(folder);
}

absl::StatusOr<std::unique_ptr<Journal>> Journal::Open(
    const std::string& home, const std::string& session_id) {
  ASSIGN_OR_RETURN(std::string path, SessionJournalPath(home, session_id));
  RETURN_IF_ERROR(MakeDirectories(Dirname(path), 0700));
  ASSIGN_OR_RETURN(
      UniqueFd fd,
      OpenFile(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  return std::unique_ptr<Journal>(new Journal(path, std::move(fd)));
}

absl::Status Journal::Append(const JournalRecord& record) {
  std::string line = MessageToJsonLine(record);
  line.push_back('\n');
  return WriteAll(fd_.get(), line);
}

absl::StatusOr<std::vector<provider::ChatMessage>> ReadConversation(
    const std::string& path) {
  RegularFileOptions options;  // no link, a journal's cap
  options.max_bytes = kMaxJournalFileBytes;
  absl::StatusOr<std::string> text = ReadRegularFile(path, options);
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(
        absl::StrCat("no session journal at ", path,
                     ": check the id after --resume (ls ~/.garuda/sessions)"));
  }
  RETURN_IF_ERROR(text.status());
  std::vector<provider::ChatMessage> messages;
  std::vector<absl::string_view> lines = absl::StrSplit(*text, '\n');
  // The last piece is "" after a final newline, or a torn line.
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    JournalRecord record;
    RETURN_IF_ERROR(
        ParseJsonMessage(lines[i], absl::StrCat(path, ":", i + 1), &record));
    if (record.has_message()) {
      // A note for the model was journaled as its own user message; in the
      // conversation it joins the user message before it.
      if (!messages.empty() && messages.back().role() == "user" &&
          record.message().role() == "user") {
        provider::ChatMessage& last = messages.back();
        const std::string& text = record.message().text();
        last.set_text(last.text().empty() || text.empty()
                          ? last.text() + text
                          : absl::StrCat(last.text(), "\n\n", text));
        for (const provider::ToolResult& result :
             record.message().tool_results()) {
          *last.add_tool_results() = result;
        }
      } else {
        messages.push_back(record.message());
      }
    }
    if (record.has_clear()) messages.clear();
  }
  return messages;
}

}  // namespace agent
}  // namespace garuda
