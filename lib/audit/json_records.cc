#include "lib/audit/json_records.h"

#include "absl/strings/str_cat.h"
#include "lib/audit/line_format.h"

namespace garuda {
namespace {

void Key(const char* name, std::string* out) {
  if (out->size() > 1) out->push_back(',');
  absl::StrAppend(out, "\"", name, "\":");
}
void String(const char* name, const std::string& value, std::string* out) {
  Key(name, out);
  AppendJsonString(value, out);
}
void Number(const char* name, uint64_t value, std::string* out) {
  Key(name, out);
  absl::StrAppend(out, value);
}

}  // namespace

std::string CheckpointJson(const audit::AuditCheckpoint& checkpoint) {
  std::string out = "{";
  String("log", checkpoint.log(), &out);
  Number("seq", checkpoint.seq(), &out);
  String("hash", checkpoint.hash(), &out);
  out.push_back('}');
  return out;
}

std::string WitnessHeadJson(const audit::WitnessHead& head) {
  std::string out = "{";
  String("dir", head.dir(), &out);
  String("log", head.log(), &out);
  Number("seq", head.seq(), &out);
  String("hash", head.hash(), &out);
  Number("prevSeq", head.prev_seq(), &out);
  String("prevHash", head.prev_hash(), &out);
  out.push_back('}');
  return out;
}

std::string LogReportJson(const audit::LogReport& report) {
  std::string out = "{";
  String("dir", report.dir(), &out);
  String("log", report.log(), &out);
  String("status", report.status(), &out);
  String("message", report.message(), &out);
  Number("lines", report.lines(), &out);
  Number("lastSeq", report.last_seq(), &out);
  Number("seq", report.seq(), &out);
  Number("line", report.line(), &out);
  Key("checkpoint", &out);
  out.append(report.checkpoint() ? "true" : "false");
  Number("witnessedSeq", report.witnessed_seq(), &out);
  out.push_back('}');
  return out;
}

}  // namespace garuda
