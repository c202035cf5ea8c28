// The session's budget journal, ~/.garuda/sessions/<id>/budget.jsonl: one
// JSON record per ledger operation (proto/budget_journal.proto, JournalRecord),
// so the session limit holds across turns, crashes and resumes.
//
// What it guards against is a budgeter or agent that crashes or is killed:
// the session must not forget spent tokens when it resumes.
// - A record that raises a charge (a grant, a child's lease, a report above a
//   reservation) is WRITTEN (one write(2) of whole lines, O_APPEND) before it
//   is answered: once written, the kernel keeps it if the process dies.
// - A record that only lowers a charge (a settle to a reported usage, also a
//   child's debit) or changes none (a refusal, a floor) waits for the next
//   write: losing it keeps the whole reservation charged, which is safe.
// - fdatasync is grouped and off the answer path: the server calls Flush()
//   once it has been idle for kIdleBeforeFlush, or when records have waited
//   kLongestUnsynced while it was busy all along; Close() always syncs, and
//   closing a child syncs before its lease returns. A power loss can lose the
//   records of the last group.
// - On resume the journal is replayed through the same Ledger calls, each
//   checked against the recorded result; reservations and children still open
//   (the session crashed) are then charged as spent, with records saying so.
// - A line that does not parse stops the start with its line number: the
//   journal is never reset to zero. The one exception is a last line with no
//   newline that does not parse: a write cut by a crash, never answered, so
//   dropping it cannot lower a charge; the start says it dropped it.
#ifndef GARUDA_LIB_BUDGET_JOURNAL_H_
#define GARUDA_LIB_BUDGET_JOURNAL_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/home.h"
#include "lib/base/unique_fd.h"
#include "lib/budget/journal_records.h"
#include "lib/budget/ledger.h"
#include "proto/budget_journal.pb.h"
#include "proto/budgeter_service.pb.h"

namespace garuda {
namespace budget {

// The server flushes after this long with no request...
inline constexpr std::chrono::milliseconds kIdleBeforeFlush{5};
// ... and, while requests keep coming, once a record has waited this long.
inline constexpr std::chrono::milliseconds kLongestUnsynced{1000};

// The ledger of a session backed by its journal. Each operation changes the
// ledger and queues its record; Commit() must succeed before any of their
// replies is sent. After a failed write the object refuses everything.
class JournaledLedger {
 public:
  using Clock = std::chrono::steady_clock;
  struct Start {
    std::string path;
    int64_t limit = 0;
    // The negative control of the crash tests ONLY: Commit() and Flush()
    // write nothing and everything is written at Close(), as a journal kept
    // in memory would be. Never set by the program.
    bool write_only_at_close = false;
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
  // More lease for an open child; written before its answer when granted
  // (it raises a charge of the parent).
  absl::StatusOr<ExtendChildResult> ExtendChild(AgentId parent, AgentId child,
                                                int64_t tokens);
  // Records the settles and closes below `child` one by one (so each is in the
  // journal), then the child's own close.
  absl::StatusOr<CloseChildResult> CloseChild(AgentId parent, AgentId child,
                                              const ChildReport& report);
  absl::StatusOr<int64_t> SetFloor(AgentId agent, int64_t tokens);

  // Before the replies of the records queued so far are sent: writes them
  // (one write) when one of them raises a charge, and fdatasyncs when one of
  // them returns a lease. Records that only lower a charge stay queued. Cheap
  // when nothing needs writing.
  absl::Status Commit();
  // Writes every queued record and fdatasyncs what is written but not synced
  // (the server calls it when idle; see kIdleBeforeFlush).
  absl::Status Flush();
  // Whether Flush() has work, and since when (the first record queued or
  // written since the last Flush()).
  bool flush_pending() const { return !pending_.empty() || unsynced_; }
  Clock::time_point dirty_since() const { return dirty_since_; }
  // Flush(), then refuses everything; also done by the destructor.
  absl::Status Close();
  ~JournaledLedger();

  const Ledger& ledger() const { return ledger_; }
  // What the start found: replayed records, charges recovered from a crash,
  // a dropped torn line. One line each, for the program's log.
  const std::vector<std::string>& start_notes() const { return notes_; }

 private:
  // What a record needs before its reply is sent.
  enum class Durability {
    kQueued,   // nothing: it lowers a charge or changes none
    kWritten,  // written: it raises a charge
    kSynced,   // written and fdatasynced: a lease returns to the parent
  };
  JournaledLedger(UniqueFd fd, std::string path, Ledger ledger);
  absl::Status Broken() const;
  void Queue(const JournalRecord& record, Durability durability);
  absl::Status Write();
  absl::Status Sync();
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
  bool write_only_at_close_ = false;
  std::string pending_;
  bool pending_write_ = false;  // a queued record must be written first
  bool pending_sync_ = false;   // ... and synced
  bool unsynced_ = false;       // written, not yet fdatasynced
  Clock::time_point dirty_since_;
  bool closed_ = false;
  absl::Status broken_;
  std::vector<std::string> notes_;
};

}  // namespace budget
}  // namespace garuda

#endif  // GARUDA_LIB_BUDGET_JOURNAL_H_
