#include "lib/audit/append_stream.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/str_cat.h"
#include "lib/audit/event_json.h"
#include "lib/audit/line_format.h"
#include "lib/base/errno_status.h"
#include "lib/base/status_macros.h"

namespace garuda {

absl::StatusOr<AppendStreamResult> AppendEventsFromStream(
    int in, AuditWriter& writer,
    const std::function<void(const std::string&)>& on_refused,
    const std::atomic<bool>* stop) {
  AppendStreamResult result;
  std::string buffer;
  std::vector<audit::AuditEvent> batch;
  uint64_t line_number = 0;
  bool at_end = false;
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
  while (!at_end) {
    char chunk[1 << 16];
    ssize_t n = 1;
    if (stop != nullptr) {
      // The caller keeps SIGINT and SIGTERM blocked; they are let in only
      // while waiting here, so one that comes between two reads is not lost.
      sigset_t wait_mask;
      pthread_sigmask(SIG_SETMASK, nullptr, &wait_mask);
      sigdelset(&wait_mask, SIGINT);
      sigdelset(&wait_mask, SIGTERM);
      struct pollfd poll_fd = {in, POLLIN, 0};
      if (::ppoll(&poll_fd, 1, nullptr, &wait_mask) < 0) n = -1;
    }
    if (n > 0) n = ::read(in, chunk, sizeof(chunk));
    if (n < 0 && errno == EINTR && stop != nullptr && stop->load()) {
      // Ctrl-C or SIGTERM: the complete lines so far count, a partial line
      // does not; the caller closes the log.
      result.interrupted = true;
      buffer.erase(
          buffer.rfind('\n') == std::string::npos ? 0 : buffer.rfind('\n') + 1);
      n = 0;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      RETURN_IF_ERROR(flush_batch());
      return LastErrnoStatus("read(standard input)");
    }
    if (n == 0) {
      at_end = true;
      // A last line without its newline still counts.
      if (!buffer.empty()) buffer.push_back('\n');
    } else {
      buffer.append(chunk, static_cast<size_t>(n));
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
      absl::Status status = line.size() > kMaxAuditLineBytes
                                ? absl::InvalidArgumentError("too long")
                                : ParseEventJson(line, &event);
      if (status.ok()) status = ValidateEvent(event);
      if (!status.ok()) {
        status = absl::InvalidArgumentError(
            absl::StrCat("line ", line_number, ": ", status.message()));
        // The events before it go first, so the log keeps the input order.
        RETURN_IF_ERROR(flush_batch());
        ++result.refused;
        on_refused(std::string(status.message()));
        continue;
      }
      batch.push_back(std::move(event));
    }
    buffer.erase(0, start);
    if (buffer.size() > kMaxAuditLineBytes) {
      RETURN_IF_ERROR(flush_batch());
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_number + 1, " is longer than ",
                       kMaxAuditLineBytes, " bytes"));
    }
    RETURN_IF_ERROR(flush_batch());
  }
  return result;
}

}  // namespace garuda
