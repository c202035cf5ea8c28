// The session's conversation on disk: ~/.garuda/sessions/<id>/journal.jsonl,
// one JournalRecord (proto/agent_journal.proto) per line, appended as the
// conversation goes, read back by `garuda-agent --resume ID`. The
// descriptor is opened before the agent locks itself down and kept.
#ifndef GARUDA_LIB_AGENT_JOURNAL_H_
#define GARUDA_LIB_AGENT_JOURNAL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/base/unique_fd.h"
#include "proto/agent_journal.pb.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

// "20261130T003000-<pid>-<6 hex>": sortable, unique enough, and a valid
// session id for the budgeter.
std::string NewSessionId(absl::Time now);

// <home>/.garuda/sessions/<id>/journal.jsonl; an id with characters other
// than letters, digits, '.', '_' and '-' is an error.
absl::StatusOr<std::string> SessionJournalPath(const std::string& home,
                                               const std::string& session_id);

class Journal {
 public:
  // Creates the session folder (0700) and opens the journal for appending
  // (0600, created when missing).
  static absl::StatusOr<std::unique_ptr<Journal>> Open(
      const std::string& home, const std::string& session_id);

  // One line, written with a single write(2): a crash leaves at most a torn
  // last line, which ReadConversation skips.
  absl::Status Append(const JournalRecord& record);
  const std::string& path() const { return path_; }

 private:
  Journal(std::string path, UniqueFd fd)
      : path_(std::move(path)), fd_(std::move(fd)) {}
  std::string path_;
  UniqueFd fd_;
};

// The conversation to continue: the messages after the last /clear. A
// session that never started (no such journal) is NOT_FOUND naming the id.
// `project`, when given, gets the project folder of the session's first
// start ("" for a journal without one).
absl::StatusOr<std::vector<provider::ChatMessage>> ReadConversation(
    const std::string& path, std::string* project = nullptr);

// One session of a project, from its journal (`garuda-agent sessions`).
struct SessionSummary {
  std::string id;
  std::string start;         // RFC 3339, from the first start record
  std::string first_prompt;  // the first prompt's first line
  int turns = 0;             // prompts from the person
};

// The sessions under <home>/.garuda/sessions whose first start names
// `project`, oldest first (ids sort by their start time). Journals that
// cannot be read are skipped: one damaged session must not hide the rest.
std::vector<SessionSummary> ListSessions(const std::string& home,
                                         const std::string& project);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_JOURNAL_H_
