#include "lib/audit/append_stream.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/audit/event_json.h"
#include "lib/audit/line_format.h"
#include "lib/base/errno_status.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"

namespace garuda {

absl::StatusOr<AppendStreamResult> AppendEventsFromStream(
    int in, AuditWriter& writer,
    const std::function<void(const std::string&)>& on_refused,
    int interrupt_fd) {
  AppendStreamResult result;
  std::string buffer;
  std::vector<audit::AuditEvent> batch;
  uint64_t line_number = 0;
  bool at_end = false;
  // Inside a line longer than kMaxAuditLineBytes: its bytes are dropped up
  // to its newline.
  bool skipping = false;
  auto flush_batch = [&]() -> absl::Status {
    if (batch.empty()) return absl::OkStatus();
    ASSIGN_OR_RETURN(AppendResult appended, writer.Append(batch, false));
    result.appended += batch.size();
    for (std::string& warning : appended.warnings) {
      result.warnings.push_back(std::move(warning));
    }
    batch.clear();
    return absl::OkStatus();
  };
  auto refuse = [&](uint64_t number, absl::string_view why) -> absl::Status {
    // The events before it go first, so the log keeps the input order.
    RETURN_IF_ERROR(flush_batch());
    ++result.refused;
    if (result.refused_lines.size() < kMaxListedRefusals) {
      result.refused_lines.push_back(number);
    }
    on_refused(absl::StrCat("line ", number, ": ", why));
    return absl::OkStatus();
  };
  auto interrupted = [&]() {
    if (interrupt_fd < 0) return false;
    struct pollfd poll_fd = {interrupt_fd, POLLIN, 0};
    return ::poll(&poll_fd, 1, 0) > 0;
  };
  while (!at_end) {
    char chunk[1 << 16];
    ssize_t n = 0;
    if (interrupt_fd >= 0) {
      // Both at once: a signal is seen even while input is always ready.
      struct pollfd fds[2] = {{interrupt_fd, POLLIN, 0}, {in, POLLIN, 0}};
      int ready = ::poll(fds, 2, -1);
      if (ready < 0 && errno != EINTR) {
        RETURN_IF_ERROR(flush_batch());
        return LastErrnoStatus("poll(standard input)");
      }
      if (ready < 0) continue;
      if (fds[0].revents != 0) {
        // Ctrl-C or SIGTERM: the complete lines so far count, a partial
        // line does not; the caller closes the log.
        result.interrupted = true;
        break;
      }
    }
    n = ::read(in, chunk, sizeof(chunk));
    if (n < 0) {
      if (errno == EINTR) continue;
      RETURN_IF_ERROR(flush_batch());
      return LastErrnoStatus("read(standard input)");
    }
    absl::string_view data(chunk, static_cast<size_t>(n));
    if (skipping) {
      size_t newline = data.find('\n');
      if (newline == absl::string_view::npos && n > 0) continue;
      skipping = false;
      data.remove_prefix(newline == absl::string_view::npos ? data.size()
                                                            : newline + 1);
    }
    if (n == 0) {
      at_end = true;
      // A last line without its newline still counts.
      if (!buffer.empty()) buffer.push_back('\n');
    } else {
      buffer.append(data.data(), data.size());
    }
    size_t start = 0;
    for (;;) {
      size_t newline = buffer.find('\n', start);
      if (newline == std::string::npos) break;
      absl::string_view line(buffer.data() + start, newline - start);
      start = newline + 1;
      ++line_number;
      if (line.find_first_not_of(" \t\r") == absl::string_view::npos) continue;
      audit::AuditEvent event;
      absl::Status status =
          line.size() > kMaxAuditLineBytes
              ? absl::InvalidArgumentError(absl::StrCat(
                    "longer than ", kMaxAuditLineBytes, " bytes"))
              : ParseEventJson(line, &event);
      if (status.ok()) status = ValidateEvent(event);
      if (!status.ok()) {
        RETURN_IF_ERROR(refuse(line_number, MakeMessageVisible(status.message())));
        continue;
      }
      batch.push_back(std::move(event));
    }
    buffer.erase(0, start);
    if (buffer.size() > kMaxAuditLineBytes) {
      // No newline within the longest line there may be: refuse this one
      // now and drop the rest of it as it comes.
      ++line_number;
      buffer.clear();
      skipping = true;
      RETURN_IF_ERROR(refuse(line_number, absl::StrCat("longer than ",
                                                       kMaxAuditLineBytes,
                                                       " bytes")));
    }
    RETURN_IF_ERROR(flush_batch());
    if (interrupted()) {
      result.interrupted = true;
      break;
    }
  }
  RETURN_IF_ERROR(flush_batch());
  return result;
}

std::string RefusalSummary(const AppendStreamResult& result) {
  std::string out = absl::StrCat(result.appended, " appended, ",
                                 result.refused, " refused");
  if (!result.refused_lines.empty()) {
    absl::StrAppend(&out, " (line",
                    result.refused_lines.size() > 1 ? "s " : " ",
                    absl::StrJoin(result.refused_lines, ", "),
                    result.refused > result.refused_lines.size() ? ", ..." : "",
                    ")");
  }
  return out;
}

}  // namespace garuda
