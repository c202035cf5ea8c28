// The records of the session's budget journal: one line of JSON each
// (proto/budget.proto, JournalRecord), and their replay through the same
// Ledger calls, each checked against the recorded result (journal.h says
// when each is written).
#ifndef GARUDA_LIB_BUDGET_JOURNAL_RECORDS_H_
#define GARUDA_LIB_BUDGET_JOURNAL_RECORDS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/files.h"
#include "lib/budget/ledger.h"
#include "proto/budget_journal.pb.h"
#include "proto/budgeter_service.pb.h"

namespace garuda {
namespace budget {

// A journal is never a link, a FIFO or a device, and at most
// kMaxJournalFileBytes (256 MiB, some two million model requests).
inline RegularFileOptions JournalFileOptions() {
  RegularFileOptions options;
  options.max_bytes = kMaxJournalFileBytes;
  return options;
}

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

}  // namespace budget
}  // namespace garuda

#endif  // GARUDA_LIB_BUDGET_JOURNAL_RECORDS_H_
