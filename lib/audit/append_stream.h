// `garuda-auditor append`: events as JSON lines on a stream, into a writer.
#ifndef GARUDA_LIB_AUDIT_APPEND_STREAM_H_
#define GARUDA_LIB_AUDIT_APPEND_STREAM_H_

#include <atomic>
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
  std::vector<std::string> warnings;  // from the witness
  bool interrupted = false;           // `stop` ended the input early
};

// Reads `in` to its end. Each non-empty line is one AuditEvent in JSON
// (unknown fields and wrong types are errors). A bad line is refused:
// `on_refused` gets "line N: <why>", nothing is written for it, and the
// lines around it go on. Returns an error only when the writer fails or
// `in` cannot be read; the events before that are in the log. With `stop`,
// the caller blocks SIGINT and SIGTERM and sets *stop in their handler: the
// wait for input lets them in, and then the input ends there (complete
// lines count, a partial last line is dropped).
absl::StatusOr<AppendStreamResult> AppendEventsFromStream(
    int in, AuditWriter& writer,
    const std::function<void(const std::string&)>& on_refused,
    const std::atomic<bool>* stop = nullptr);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_APPEND_STREAM_H_
