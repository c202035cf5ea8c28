#include "lib/provider/sse.h"

#include "absl/strings/str_cat.h"

namespace garuda {
namespace provider {

absl::Status SseParser::Feed(absl::string_view bytes) {
  if (!error_.ok()) return error_;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n') continue;  // the LF of a CRLF
    }
    if (c == '\r' || c == '\n') {
      after_cr_ = c == '\r';
      absl::Status status = Line(line_);
      line_.clear();
      if (!status.ok()) {
        error_ = status;
        return status;
      }
      continue;
    }
    line_.push_back(c);
    if (line_.size() > max_bytes_) {
      error_ = absl::ResourceExhaustedError(
          absl::StrCat("a stream line is longer than ", max_bytes_, " bytes"));
      return error_;
    }
  }
  return absl::OkStatus();
}

absl::Status SseParser::Line(absl::string_view line) {
  if (at_start_) {
    at_start_ = false;
    // A byte order mark may start the stream.
    if (line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
  }
  if (line.empty()) {
    SseEvent event = std::move(pending_);
    const bool dispatch = has_data_;
    pending_ = SseEvent();
    has_data_ = false;
    if (!dispatch) return absl::OkStatus();
    return handler_(event);
  }
  if (line[0] == ':') return absl::OkStatus();  // a comment (keep-alive)
  absl::string_view field = line;
  absl::string_view value;
  const size_t colon = line.find(':');
  if (colon != absl::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "event") {
    pending_.event = std::string(value);
  } else if (field == "data") {
    if (has_data_) pending_.data.push_back('\n');
    pending_.data.append(value.data(), value.size());
    has_data_ = true;
    if (pending_.data.size() > max_bytes_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "a stream event's data is longer than ", max_bytes_, " bytes"));
    }
  }
  // `id`, `retry` and unknown fields do not matter to a model stream.
  return absl::OkStatus();
}

bool SseParser::Finish() {
  const bool clean = line_.empty() && !has_data_;
  line_.clear();
  pending_ = SseEvent();
  has_data_ = false;
  return clean;
}

}  // namespace provider
}  // namespace garuda
