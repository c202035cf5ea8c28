// `garuda-auditor append`: events as JSON lines on a stream, into a writer.
#ifndef GARUDA_LIB_AUDIT_APPEND_STREAM_H_
#define GARUDA_LIB_AUDIT_APPEND_STREAM_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/audit/writer.h"

namespace garuda {

struct AppendStreamResult {
  uint64_t appended = 0;
  uint64_t refused = 0;
  // The numbers of the first kMaxListedRefusals refused lines, for the
  // summary.
  std::vector<uint64_t> refused_lines;
  std::vector<std::string> warnings;  // from the witness
  bool interrupted = false;           // `interrupt_fd` ended the input early
};
inline constexpr size_t kMaxListedRefusals = 20;

// Reads `in` to its end. Each non-empty line is one AuditEvent in JSON
// (unknown fields and wrong types are errors). A bad line is refused:
// `on_refused` gets "line N: <why>", nothing is written for it, and the
// lines around it go on. A line longer than kMaxAuditLineBytes is refused
// the same way, without holding more than that of it in memory. Returns an
// error only when the writer fails or `in` cannot be read; the events before
// that are in the log.
//
// With `interrupt_fd` (a signalfd of SIGINT and SIGTERM, which the caller
// keeps blocked), the input ends as soon as it is readable: it is looked at
// before every read, so input that keeps coming cannot hold the signal off.
// The complete lines before it count, a partial last line is dropped.
absl::StatusOr<AppendStreamResult> AppendEventsFromStream(
    int in, AuditWriter& writer,
    const std::function<void(const std::string&)>& on_refused,
    int interrupt_fd = -1);

// "3 appended, 2 refused (lines 4, 9)" for the summary.
std::string RefusalSummary(const AppendStreamResult& result);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_APPEND_STREAM_H_
