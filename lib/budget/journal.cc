#include "lib/budget/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/util/json_util.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace budget {
namespace {

absl::Status Mismatch(absl::string_view what, uint64_t recorded,
                      uint64_t replayed) {
  return absl::DataLossError(
      absl::StrCat("the ledger gives ", what, " ", replayed,
                   " where the journal recorded ", recorded));
}

template <typename T>
absl::Status Take(absl::StatusOr<T> result, T* out) {
  if (!result.ok()) return result.status();
  *out = *std::move(result);
  return absl::OkStatus();
}

absl::Status ApplySettle(uint64_t reservation, int64_t used,
                         bool usage_reported, int64_t charged, bool child,
                         AgentId child_id, const std::string& report_id,
                         Ledger* ledger) {
  ASSIGN_OR_RETURN(OpenReservation open, ledger->FindReservation(reservation));
  if (child != (open.agent != kTopAgent)) {
    return absl::DataLossError(absl::StrCat(
        "reservation ", reservation, " belongs to agent ", open.agent,
        child ? ", not a child" : ": a child's settle is a childDebit"));
  }
  if (child &&
      (open.agent != child_id || ledger->ReportIdOf(open.agent) != report_id)) {
    return absl::DataLossError(absl::StrCat(
        "reservation ", reservation, " belongs to agent ", open.agent,
        " (report \"", ledger->ReportIdOf(open.agent), "\"), not agent ",
        child_id, " (report \"", report_id, "\")"));
  }
  SettleResult result;
  RETURN_IF_ERROR(Take(
      ledger->Settle(open.agent, reservation, used, usage_reported), &result));
  if (result.charged != charged) {
    return Mismatch("a charge of", charged, result.charged);
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// The hot records (a grant and a settle per model request) are written
// without protobuf's JSON printer, which costs several microseconds a line.
// The output is byte for byte what that printer gives (journal_test checks
// it): fields in number order, defaults left out, 64-bit numbers quoted. Only
// strings that need no escaping take this path.
bool Plain(absl::string_view text) {
  for (char c : text) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) &&
        std::string_view("_-.:/#@+= ").find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

class Fields {
 public:
  explicit Fields(std::string* out) : out_(out) {}
  void Quoted(absl::string_view name, uint64_t value) {
    if (value != 0) Add(name, absl::StrCat("\"", value, "\""));
  }
  void Quoted(absl::string_view name, int64_t value) {
    if (value != 0) Add(name, absl::StrCat("\"", value, "\""));
  }
  void Number(absl::string_view name, uint32_t value) {
    if (value != 0) Add(name, absl::StrCat(value));
  }
  void String(absl::string_view name, absl::string_view value) {
    if (!value.empty()) Add(name, absl::StrCat("\"", value, "\""));
  }
  void Bool(absl::string_view name, bool value) {
    if (value) Add(name, "true");
  }

 private:
  void Add(absl::string_view name, absl::string_view value) {
    absl::StrAppend(out_, first_ ? "" : ",", "\"", name, "\":", value);
    first_ = false;
  }
  std::string* out_;
  bool first_ = true;
};

}  // namespace

std::string FormatRecord(const JournalRecord& record) {
  std::string out;
  if (record.has_grant() && Plain(record.grant().purpose()) &&
      Plain(record.grant().request_id())) {
    const JournalGrant& grant = record.grant();
    out = "{\"grant\":{";
    Fields fields(&out);
    fields.Quoted("reservation", grant.reservation());
    fields.Number("agent", grant.agent());
    fields.Quoted("tokens", grant.tokens());
    fields.String("purpose", grant.purpose());
    fields.String("requestId", grant.request_id());
    out += "}}\n";
    return out;
  }
  if (record.has_settle()) {
    const JournalSettle& settle = record.settle();
    out = "{\"settle\":{";
    Fields fields(&out);
    fields.Quoted("reservation", settle.reservation());
    fields.Quoted("used", settle.used());
    fields.Bool("usageReported", settle.usage_reported());
    fields.Quoted("charged", settle.charged());
    fields.Bool("recovered", settle.recovered());
    out += "}}\n";
    return out;
  }
  if (record.has_child_debit() && Plain(record.child_debit().report_id())) {
    const JournalChildDebit& debit = record.child_debit();
    out = "{\"childDebit\":{";
    Fields fields(&out);
    fields.Quoted("reservation", debit.reservation());
    fields.Number("child", debit.child());
    fields.String("reportId", debit.report_id());
    fields.Quoted("used", debit.used());
    fields.Bool("usageReported", debit.usage_reported());
    fields.Quoted("charged", debit.charged());
    fields.Bool("recovered", debit.recovered());
    out += "}}\n";
    return out;
  }
  return absl::StrCat(MessageToJsonLine(record), "\n");
}

absl::StatusOr<JournalRecord> ParseRecord(absl::string_view line) {
  JournalRecord record;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(line.data(), line.size()), &record,
      options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a budget record: ",
        std::string(status.message().data(), status.message().size())));
  }
  if (record.record_case() == JournalRecord::RECORD_NOT_SET) {
    return absl::InvalidArgumentError("a record with none of the known kinds");
  }
  return record;
}

absl::Status ApplyRecord(const JournalRecord& record, Ledger* ledger) {
  switch (record.record_case()) {
    case JournalRecord::kStart:
      return ledger->Restart(record.start().limit());
    case JournalRecord::kGrant: {
      const JournalGrant& grant = record.grant();
      ReserveResult result;
      RETURN_IF_ERROR(
          Take(ledger->Reserve(grant.agent(), grant.tokens()), &result));
      if (result.reservation != grant.reservation()) {
        return Mismatch("reservation", grant.reservation(), result.reservation);
      }
      return absl::OkStatus();
    }
    case JournalRecord::kSettle: {
      const JournalSettle& settle = record.settle();
      return ApplySettle(settle.reservation(), settle.used(),
                         settle.usage_reported(), settle.charged(), false, 0,
                         "", ledger);
    }
    case JournalRecord::kChildDebit: {
      const JournalChildDebit& debit = record.child_debit();
      return ApplySettle(debit.reservation(), debit.used(),
                         debit.usage_reported(), debit.charged(), true,
                         debit.child(), debit.report_id(), ledger);
    }
    case JournalRecord::kOpenChild: {
      const JournalOpenChild& open = record.open_child();
      OpenChildResult result;
      RETURN_IF_ERROR(
          Take(ledger->OpenChild(open.parent(), open.limit(), open.report_id()),
               &result));
      if (result.child != open.child()) {
        return Mismatch("child", open.child(), result.child);
      }
      if (result.lease != open.lease()) {
        return Mismatch("a lease of", open.lease(), result.lease);
      }
      return absl::OkStatus();
    }
    case JournalRecord::kCloseChild: {
      const JournalCloseChild& close = record.close_child();
      if (!ledger->IsOpen(close.child()) || close.child() == kTopAgent) {
        return absl::DataLossError(
            absl::StrCat("agent ", close.child(), " is not an open child"));
      }
      CloseChildResult result;
      RETURN_IF_ERROR(Take(
          ledger->CloseChild(ledger->ParentOf(close.child()), close.child(),
                             close.report().reported_tokens()),
          &result));
      if (result.charged != close.charged()) {
        return Mismatch("a charge of", close.charged(), result.charged);
      }
      return absl::OkStatus();
    }
    case JournalRecord::kFloor:
      return ledger->SetFloor(record.floor().agent(), record.floor().tokens())
          .status();
    case JournalRecord::RECORD_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("a record with none of the known kinds");
}

absl::StatusOr<Replay> ReplayJournal(absl::string_view text,
                                     absl::string_view path) {
  Replay replay;
  size_t offset = 0;
  int64_t line_number = 0;
  while (offset < text.size()) {
    ++line_number;
    size_t end = text.find('\n', offset);
    const bool has_newline = end != absl::string_view::npos;
    if (!has_newline) end = text.size();
    absl::string_view line = text.substr(offset, end - offset);
    auto fail = [&](const absl::Status& status) {
      return absl::Status(
          status.code(),
          absl::StrCat(path, ":", line_number, ": ", status.message(),
                       ". The budget journal is kept as it is; the session "
                       "cannot start until it is repaired or moved away"));
    };
    absl::StatusOr<JournalRecord> record = ParseRecord(line);
    if (!record.ok()) {
      if (!has_newline) {
        // A write cut short by a crash: it was never answered (answers wait
        // for the whole write), so dropping it lowers no charge.
        replay.dropped_torn_line = true;
        break;
      }
      return fail(record.status());
    }
    if (replay.records == 0 && !record->has_start()) {
      return fail(
          absl::DataLossError("the journal must begin with a start record"));
    }
    absl::Status applied = ApplyRecord(*record, &replay.ledger);
    if (!applied.ok()) return fail(applied);
    ++replay.records;
    offset = has_newline ? end + 1 : end;
    replay.valid_bytes = offset;
    if (!has_newline) replay.missing_final_newline = true;
  }
  return replay;
}

absl::StatusOr<Replay> ReadJournal(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ReplayJournal(text, path);
}

JournaledLedger::JournaledLedger(UniqueFd fd, std::string path, Ledger ledger)
    : fd_(std::move(fd)), path_(std::move(path)), ledger_(std::move(ledger)) {}

absl::StatusOr<std::unique_ptr<JournaledLedger>> JournaledLedger::Open(
    const Start& start) {
  if (start.limit < 0 || start.limit > kMaxTokens) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the token limit must be 0 to ", kMaxTokens, ", not ", start.limit));
  }
  RETURN_IF_ERROR(MakeDirectories(Dirname(start.path), 0700));
  ASSIGN_OR_RETURN(UniqueFd fd,
                   OpenFile(start.path, O_RDWR | O_CREAT | O_APPEND, 0600));
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) {
      return absl::FailedPreconditionError(absl::StrCat(
          start.path, " is in use by another garuda-budgeter of this session"));
    }
    return LastErrnoStatus(absl::StrCat("flock(", start.path, ")"));
  }
  ASSIGN_OR_RETURN(std::string text, ReadAll(fd.get()));
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
