// The session's budget journal, ~/.garuda/sessions/<id>/budget.jsonl: one
// JSON record per ledger operation (proto/budget.proto, JournalRecord), so
// the session limit holds across turns, crashes and resumes.
//
// - A grant (a reservation or a child's lease) is written and fsynced before
//   it is answered; a settle that lowers a charge is only written (losing it
//   in a crash keeps the whole reservation charged, which is safe).
// - On resume the journal is replayed through the same Ledger calls, each
//   checked against the recorded result; reservations and children still open
//   (the session crashed) are then charged as spent, with records saying so.
// - A line that does not parse stops the start with its line number: the
//   journal is never reset to zero. The one exception is a last line with no
//   newline that does not parse: a write cut by a crash, never answered, so
//   dropping it cannot lower a charge; the start says it dropped it.
#ifndef GARUDA_LIB_BUDGET_JOURNAL_H_
#define GARUDA_LIB_BUDGET_JOURNAL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/unique_fd.h"
#include "lib/budget/ledger.h"
#include "proto/budget.pb.h"

namespace garuda {
namespace budget {

// ~/.garuda/sessions/<id> under `home`. A session id is 1 to 128 of
// [A-Za-z0-9._-], not "." or "..": it names a folder.
absl::StatusOr<std::string> SessionDirectory(absl::string_view home,
                                             absl::string_view session_id);
// <session directory>/budget.jsonl
std::string JournalPath(absl::string_view session_directory);

// One record as a line of JSON with its newline, and back.
std::string FormatRecord(const JournalRecord& record);
absl::StatusOr<JournalRecord> ParseRecord(absl::string_view line);

// Applies one record to `ledger`, checking that the ledger gives the result
// the record says (the same reservation id, child id, lease and charge).
absl::Status ApplyRecord(const JournalRecord& record, Ledger* ledger);

struct Replay {
  Ledger ledger{0};
  int64_t records = 0;
  size_t valid_bytes = 0;  // length of the whole lines that were applied
  bool dropped_torn_line = false;
  bool missing_final_newline = false;  // the last line parsed but has no "\n"
};

// Replays a journal's text. Errors start with "<path>:<line>: ".
absl::StatusOr<Replay> ReplayJournal(absl::string_view text,
                                     absl::string_view path);

// Reads and replays the journal at `path` without changing it (for status).
absl::StatusOr<Replay> ReadJournal(const std::string& path);

// The ledger of a session backed by its journal. Each operation changes the
// ledger and queues its record; Commit() must succeed before any of their
// replies is sent. After a failed Commit() the object refuses everything.
class JournaledLedger {
 public:
  struct Start {
    std::string path;
    int64_t limit = 0;
  };
  // Creates or resumes the journal at `path` (its folder made 0700, the file
  // 0600), locks it against a second budgeter, replays it, charges what a
  // crash left open, and records the start of this run with `limit`.
  static absl::StatusOr<std::unique_ptr<JournaledLedger>> Open(
      const Start& start);

  absl::StatusOr<ReserveResult> Reserve(AgentId agent, int64_t tokens,
                                        const std::string& purpose,
                                        const std::string& request_id);
  absl::StatusOr<SettleResult> Settle(AgentId agent, uint64_t reservation,
                                      int64_t used, bool usage_reported);
  absl::StatusOr<OpenChildResult> OpenChild(AgentId parent, int64_t limit,
                                            const std::string& report_id);
  // Records the settles and closes below `child` one by one (so each is in the
  // journal), then the child's own close.
  absl::StatusOr<CloseChildResult> CloseChild(AgentId parent, AgentId child,
                                              const ChildReport& report);
  absl::StatusOr<int64_t> SetFloor(AgentId agent, int64_t tokens);

  // Writes the queued records; fdatasync when one of them could raise a
  // charge. Cheap when nothing is queued.
  absl::Status Commit();

  const Ledger& ledger() const { return ledger_; }
  // What the start found: replayed records, charges recovered from a crash,
  // a dropped torn line. One line each, for the program's log.
  const std::vector<std::string>& start_notes() const { return notes_; }

 private:
  JournaledLedger(UniqueFd fd, std::string path, Ledger ledger);
  absl::Status Broken() const;
  void Queue(const JournalRecord& record, bool sync);
  // Records a settle of an open reservation; without usage when `kept`.
  absl::StatusOr<SettleResult> SettleRecorded(AgentId agent,
                                              uint64_t reservation,
                                              int64_t used, bool usage_reported,
                                              bool recovered);
  absl::StatusOr<CloseChildResult> CloseRecorded(AgentId parent, AgentId child,
                                                 const ChildReport& report,
                                                 bool recovered);

  UniqueFd fd_;
  std::string path_;
  Ledger ledger_;
  std::string pending_;
  bool pending_sync_ = false;
  absl::Status broken_;
  std::vector<std::string> notes_;
};

}  // namespace budget
}  // namespace garuda

#endif  // GARUDA_LIB_BUDGET_JOURNAL_H_
