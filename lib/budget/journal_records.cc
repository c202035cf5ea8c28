#include "lib/budget/journal_records.h"

#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"

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
    // protobuf's message can quote the line.
    return absl::InvalidArgumentError(
        absl::StrCat("not a budget record: ",
                     MakeMessageVisible(absl::string_view(
                         status.message().data(), status.message().size()))));
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
    case JournalRecord::kExtendChild: {
      const JournalExtendChild& extend = record.extend_child();
      ExtendChildResult result;
      RETURN_IF_ERROR(Take(
          ledger->ExtendChild(extend.parent(), extend.child(), extend.tokens()),
          &result));
      if (result.granted != extend.granted()) {
        return Mismatch("granted", extend.granted(), result.granted);
      }
      if (result.lease != extend.lease()) {
        return Mismatch("a lease of", extend.lease(), result.lease);
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
  ASSIGN_OR_RETURN(std::string text,
                   ReadRegularFile(path, JournalFileOptions()));
  return ReplayJournal(text, path);
}

}  // namespace budget
}  // namespace garuda
