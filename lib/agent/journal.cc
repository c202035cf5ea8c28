#include "lib/agent/journal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
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
  // One session runs at a time: a second --resume (or an editor's
  // session/load) of a session in use would interleave its lines with the
  // first's. Held while this process lives.
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(
          "session ", session_id, " is in use by another garuda-agent (", path,
          " is locked); end that one first"));
    }
    return LastErrnoStatus(absl::StrCat("flock(", path, ")"));
  }
  return std::unique_ptr<Journal>(new Journal(path, std::move(fd)));
}

absl::Status Journal::Append(const JournalRecord& record) {
  std::string line = MessageToJsonLine(record);
  line.push_back('\n');
  return WriteAll(fd_.get(), line);
}

absl::StatusOr<std::vector<provider::ChatMessage>> ReadConversation(
    const std::string& path, std::string* project) {
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
    if (record.has_compaction()) {
      messages.clear();
      messages.push_back(record.compaction().summary());
    }
    if (record.has_start() && project != nullptr && project->empty()) {
      *project = record.start().project();
    }
  }
  return messages;
}

std::vector<SessionSummary> ListSessions(const std::string& home,
                                         const std::string& project) {
  std::vector<SessionSummary> sessions;
  const std::string folder = JoinPath(home, ".garuda/sessions");
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) return sessions;
  std::vector<std::string> ids;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") ids.push_back(name);
  }
  ::closedir(dir);
  std::sort(ids.begin(), ids.end());
  for (const std::string& id : ids) {
    absl::StatusOr<std::string> path = SessionJournalPath(home, id);
    if (!path.ok()) continue;
    absl::StatusOr<std::string> text = ReadFileToString(*path);
    if (!text.ok()) continue;
    SessionSummary summary;
    summary.id = id;
    bool ours = false, started = false;
    for (absl::string_view line : absl::StrSplit(*text, '\n')) {
      if (line.empty()) continue;
      JournalRecord record;
      if (!ParseJsonMessage(line, *path, &record).ok()) continue;
      if (record.has_start() && !started) {
        started = true;
        ours = record.start().project() == project;
        summary.start = record.start().time();
      }
      const provider::ChatMessage& message = record.message();
      // A prompt: the person's text, not tool results or notes after them.
      if (record.has_message() && message.role() == "user" &&
          message.tool_results_size() == 0 && !message.text().empty() &&
          !absl::StartsWith(message.text(), "[Garuda")) {
        ++summary.turns;
        if (summary.first_prompt.empty()) {
          const std::string& text = message.text();
          summary.first_prompt = text.substr(0, text.find('\n'));
        }
      }
    }
    if (ours) sessions.push_back(std::move(summary));
  }
  // The ids sort by the second a session started, then by process id: two
  // sessions of the same second are put in order by their start time.
  auto started = [](const SessionSummary& summary) {
    absl::Time time = absl::InfinitePast();
    std::string unused;
    if (!absl::ParseTime(absl::RFC3339_full, summary.start, &time, &unused)) {
      return absl::InfinitePast();
    }
    return time;
  };
  std::stable_sort(sessions.begin(), sessions.end(),
                   [&](const SessionSummary& a, const SessionSummary& b) {
                     return started(a) < started(b);
                   });
  return sessions;
}

}  // namespace agent
}  // namespace garuda
