#include "lib/budget/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace budget {

JournaledLedger::JournaledLedger(UniqueFd fd, std::string path, Ledger ledger)
    : fd_(std::move(fd)), path_(std::move(path)), ledger_(std::move(ledger)) {}

absl::StatusOr<std::unique_ptr<JournaledLedger>> JournaledLedger::Open(
    const Start& start) {
  if (start.limit < 0 || start.limit > kMaxTokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the token limit must be 0 to ", kMaxTokens, ", not ", start.limit));
  }
  RETURN_IF_ERROR(MakeDirectories(Dirname(start.path), 0700));
  // A regular file, never a link or a FIFO (which would hang the read
  // below), up to the journal's cap.
  ASSIGN_OR_RETURN(UniqueFd fd,
                   OpenRegularFile(start.path, JournalFileOptions(),
                                   O_RDWR | O_CREAT | O_APPEND, 0600));
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(
          start.path, " is in use by another garuda-budgeter of this session"));
    }
    return LastErrnoStatus(absl::StrCat("flock(", start.path, ")"));
  }
  ASSIGN_OR_RETURN(std::string text,
                   ReadUpTo(fd.get(), start.path, kMaxJournalFileBytes));
  ASSIGN_OR_RETURN(Replay replay, ReplayJournal(text, start.path));

  std::vector<std::string> notes;
  if (replay.dropped_torn_line) {
    if (::ftruncate(fd.get(), replay.valid_bytes) != 0) {
      return LastErrnoStatus(absl::StrCat("ftruncate(", start.path, ")"));
    }
    notes.push_back(absl::StrCat("dropped a last line cut short by a crash (",
                                 text.size() - replay.valid_bytes,
                                 " bytes, never answered)"));
  }
  if (replay.missing_final_newline) {
    RETURN_IF_ERROR(WriteAll(fd.get(), "\n"));
  }
  if (replay.records > 0) {
    notes.push_back(absl::StrCat("resumed: replayed ", replay.records,
                                 " records, spent ",
                                 replay.ledger.Status().spent()));
  }
  std::unique_ptr<JournaledLedger> journal(
      new JournaledLedger(std::move(fd), start.path, std::move(replay.ledger)));
  journal->notes_ = std::move(notes);

  // What a crash left open: the provider may have billed it, so it is spent.
  int64_t recovered = 0;
  for (const OpenReservation& open : journal->ledger_.OpenReservations()) {
    RETURN_IF_ERROR(journal
                        ->SettleRecorded(open.agent, open.id, 0, false,
                                         /*recovered=*/true)
                        .status());
    recovered += open.tokens;
  }
  for (AgentId child : journal->ledger_.OpenDescendants(kTopAgent)) {
    RETURN_IF_ERROR(journal
                        ->CloseRecorded(journal->ledger_.ParentOf(child), child,
                                        ChildReport(),
                                        /*recovered=*/true)
                        .status());
  }
  if (recovered > 0) {
    journal->notes_.push_back(
        absl::StrCat("charged ", recovered,
                     " tokens of reservations open at a crash as spent"));
  }
  JournalRecord record;
  JournalStart* run = record.mutable_start();
  run->set_limit(start.limit);
  run->set_started(
      absl::FormatTime(absl::RFC3339_sec, absl::Now(), absl::UTCTimeZone()));
  run->set_pid(::getpid());
  RETURN_IF_ERROR(journal->ledger_.Restart(start.limit));
  journal->Queue(record, Durability::kSynced);
  RETURN_IF_ERROR(journal->Commit());
  journal->write_only_at_close_ = start.write_only_at_close;
  return journal;
}

JournaledLedger::~JournaledLedger() { Close().IgnoreError(); }

absl::Status JournaledLedger::Broken() const {
  if (closed_ && broken_.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the budget journal ", path_, " is closed"));
  }
  if (broken_.ok()) return absl::OkStatus();
  return absl::Status(
      broken_.code(),
      absl::StrCat("the budget journal failed earlier: ", broken_.message()));
}

void JournaledLedger::Queue(const JournalRecord& record,
                            Durability durability) {
  if (!flush_pending()) dirty_since_ = Clock::now();
  pending_ += FormatRecord(record);
  pending_write_ = pending_write_ || durability != Durability::kQueued;
  pending_sync_ = pending_sync_ || durability == Durability::kSynced;
}

absl::Status JournaledLedger::Write() {
  if (pending_.empty()) return absl::OkStatus();
  // One write(2) of whole lines on an O_APPEND descriptor: once it returns,
  // the records survive the death of this process.
  absl::Status written = WriteAll(fd_.get(), pending_);
  if (!written.ok()) {
    // The ledger is ahead of the file now: nothing more may be answered.
    broken_ = absl::Status(written.code(),
                           absl::StrCat(path_, ": ", written.message()));
    return broken_;
  }
  pending_.clear();
  unsynced_ = true;
  return absl::OkStatus();
}

absl::Status JournaledLedger::Sync() {
  if (!unsynced_) return absl::OkStatus();
  if (::fdatasync(fd_.get()) != 0) {
    absl::Status synced =
        LastErrnoStatus(absl::StrCat("fdatasync(", path_, ")"));
    broken_ = absl::Status(synced.code(),
                           absl::StrCat(path_, ": ", synced.message()));
    return broken_;
  }
  unsynced_ = false;
  return absl::OkStatus();
}

absl::Status JournaledLedger::Commit() {
  RETURN_IF_ERROR(Broken());
  if (write_only_at_close_) return absl::OkStatus();
  if (pending_write_ || pending_sync_) RETURN_IF_ERROR(Write());
  if (pending_sync_) RETURN_IF_ERROR(Sync());
  pending_write_ = false;
  pending_sync_ = false;
  return absl::OkStatus();
}

absl::Status JournaledLedger::Flush() {
  RETURN_IF_ERROR(Broken());
  if (write_only_at_close_) return absl::OkStatus();
  RETURN_IF_ERROR(Write());
  RETURN_IF_ERROR(Sync());
  pending_write_ = false;
  pending_sync_ = false;
  return absl::OkStatus();
}

absl::Status JournaledLedger::Close() {
  if (closed_) return broken_;
  write_only_at_close_ = false;
  absl::Status flushed = Flush();
  closed_ = true;
  return flushed;
}

absl::StatusOr<ReserveResult> JournaledLedger::Reserve(
    AgentId agent, int64_t tokens, const std::string& purpose,
    const std::string& request_id) {
  RETURN_IF_ERROR(Broken());
  ASSIGN_OR_RETURN(ReserveResult result, ledger_.Reserve(agent, tokens));
  JournalRecord record;
  JournalGrant* grant = record.mutable_grant();
  grant->set_reservation(result.reservation);
  grant->set_agent(agent);
  grant->set_tokens(tokens);
  grant->set_purpose(purpose);
  grant->set_request_id(request_id);
  Queue(record, result.granted ? Durability::kWritten : Durability::kQueued);
  return result;
}

absl::StatusOr<SettleResult> JournaledLedger::SettleRecorded(
    AgentId agent, uint64_t reservation, int64_t used, bool usage_reported,
    bool recovered) {
  ASSIGN_OR_RETURN(OpenReservation open, ledger_.FindReservation(reservation));
  ASSIGN_OR_RETURN(SettleResult result,
                   ledger_.Settle(agent, reservation, used, usage_reported));
  JournalRecord record;
  if (agent == kTopAgent) {
    JournalSettle* settle = record.mutable_settle();
    settle->set_reservation(reservation);
    settle->set_used(used);
    settle->set_usage_reported(usage_reported);
    settle->set_charged(result.charged);
    settle->set_recovered(recovered);
  } else {
    JournalChildDebit* debit = record.mutable_child_debit();
    debit->set_reservation(reservation);
    debit->set_child(agent);
    debit->set_report_id(ledger_.ReportIdOf(agent));
    debit->set_used(used);
    debit->set_usage_reported(usage_reported);
    debit->set_charged(result.charged);
    debit->set_recovered(recovered);
  }
  // A settle at or under its reservation lowers the charge: losing it in a
  // crash keeps the whole reservation charged, so it waits for the next
  // write. A report above the reservation raises it: written before the
  // answer.
  Queue(record, result.charged > open.tokens ? Durability::kWritten
                                             : Durability::kQueued);
  return result;
}

absl::StatusOr<SettleResult> JournaledLedger::Settle(AgentId agent,
                                                     uint64_t reservation,
                                                     int64_t used,
                                                     bool usage_reported) {
  RETURN_IF_ERROR(Broken());
  return SettleRecorded(agent, reservation, used, usage_reported, false);
}

absl::StatusOr<OpenChildResult> JournaledLedger::OpenChild(
    AgentId parent, int64_t limit, const std::string& report_id) {
  RETURN_IF_ERROR(Broken());
  ASSIGN_OR_RETURN(OpenChildResult result,
                   ledger_.OpenChild(parent, limit, report_id));
  JournalRecord record;
  JournalOpenChild* open = record.mutable_open_child();
  open->set_child(result.child);
  open->set_parent(parent);
  open->set_lease(result.lease);
  open->set_report_id(report_id);
  open->set_limit(limit);
  Queue(record, result.granted ? Durability::kWritten : Durability::kQueued);
  return result;
}

absl::StatusOr<ExtendChildResult> JournaledLedger::ExtendChild(AgentId parent,
                                                               AgentId child,
                                                               int64_t tokens) {
  RETURN_IF_ERROR(Broken());
  ASSIGN_OR_RETURN(ExtendChildResult result,
                   ledger_.ExtendChild(parent, child, tokens));
  JournalRecord record;
  JournalExtendChild* extend = record.mutable_extend_child();
  extend->set_child(child);
  extend->set_parent(parent);
  extend->set_tokens(tokens);
  extend->set_granted(result.granted);
  extend->set_lease(result.lease);
  Queue(record, result.granted ? Durability::kWritten : Durability::kQueued);
  return result;
}

absl::StatusOr<CloseChildResult> JournaledLedger::CloseRecorded(
    AgentId parent, AgentId child, const ChildReport& report, bool recovered) {
  if (!ledger_.IsOpen(child) || child == kTopAgent ||
      ledger_.ParentOf(child) != parent) {
    return absl::FailedPreconditionError(
        absl::StrCat("CloseChild: agent ", child,
                     " is not an open child of agent ", parent));
  }
  if (!report.report_id().empty() &&
      report.report_id() != ledger_.ReportIdOf(child)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CloseChild: the report \"", report.report_id(), "\" is not agent ",
        child, "'s (\"", ledger_.ReportIdOf(child), "\")"));
  }
  if (report.reported_tokens() < 0 || report.reported_tokens() > kMaxTokens) {
    return absl::InvalidArgumentError(
        absl::StrCat("CloseChild: reported tokens must be 0 to ", kMaxTokens,
                     ", not ", report.reported_tokens()));
  }
  // Each charge below the child goes to the journal as its own record: what
  // it left open is kept as spent, its own children close with no report.
  for (const OpenReservation& open : ledger_.OpenReservationsUnder(child)) {
    RETURN_IF_ERROR(
        SettleRecorded(open.agent, open.id, 0, false, recovered).status());
  }
  for (AgentId below : ledger_.OpenDescendants(child)) {
    RETURN_IF_ERROR(
        CloseRecorded(ledger_.ParentOf(below), below, ChildReport(), recovered)
            .status());
  }
  ASSIGN_OR_RETURN(CloseChildResult result,
                   ledger_.CloseChild(parent, child, report.reported_tokens()));
  JournalRecord record;
  JournalCloseChild* close = record.mutable_close_child();
  close->set_child(child);
  *close->mutable_report() = report;
  close->mutable_report()->set_report_id(ledger_.ReportIdOf(child));
  close->set_charged(result.charged);
  close->set_recovered(recovered);
  // A report above what was counted raises the charge, and the rest of the
  // lease returns to the parent, who can spend it at once: synced first.
  Queue(record, Durability::kSynced);
  return result;
}

absl::StatusOr<CloseChildResult> JournaledLedger::CloseChild(
    AgentId parent, AgentId child, const ChildReport& report) {
  RETURN_IF_ERROR(Broken());
  return CloseRecorded(parent, child, report, false);
}

absl::StatusOr<int64_t> JournaledLedger::SetFloor(AgentId agent,
                                                  int64_t tokens) {
  RETURN_IF_ERROR(Broken());
  ASSIGN_OR_RETURN(int64_t left, ledger_.SetFloor(agent, tokens));
  JournalRecord record;
  record.mutable_floor()->set_agent(agent);
  record.mutable_floor()->set_tokens(tokens);
  // A floor only shapes later leases, whose records are written after it.
  Queue(record, Durability::kQueued);
  return left;
}

}  // namespace budget
}  // namespace garuda
