// A Server-Sent Events reader (the WHATWG event-stream format) for streamed
// model answers: bytes in, in whatever pieces the network delivers them;
// events out.
#ifndef GARUDA_LIB_PROVIDER_SSE_H_
#define GARUDA_LIB_PROVIDER_SSE_H_

#include <cstddef>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace garuda {
namespace provider {

struct SseEvent {
  std::string event;  // the `event:` field; empty means "message"
  std::string data;   // the `data:` lines joined with '\n'
};

class SseParser {
 public:
  // Called for each complete event; an error stops the parse and is returned
  // by Feed().
  using Handler = std::function<absl::Status(const SseEvent&)>;

  // A line or an event's data longer than `max_bytes` is an error rather than
  // memory without bound.
  explicit SseParser(Handler handler, size_t max_bytes = 16 << 20)
      : handler_(std::move(handler)), max_bytes_(max_bytes) {}

  // Lines end with CRLF, LF or CR, also when a CRLF is split between two
  // pieces. A blank line dispatches the event.
  absl::Status Feed(absl::string_view bytes);

  // The stream ended: an event without its blank line is dropped, as the
  // format says. True when nothing was pending.
  bool Finish();

 private:
  absl::Status Line(absl::string_view line);

  Handler handler_;
  size_t max_bytes_;
  std::string line_;
  bool after_cr_ = false;
  bool at_start_ = true;
  SseEvent pending_;
  bool has_data_ = false;
  absl::Status error_;
};

}  // namespace provider
}  // namespace garuda

#endif  // GARUDA_LIB_PROVIDER_SSE_H_
