#include "lib/agent/plain_interaction.h"

#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "lib/base/files.h"

namespace garuda {
namespace agent {
namespace {

class FdLineSource : public LineSource {
 public:
  explicit FdLineSource(int fd) : fd_(fd) {}

  std::optional<std::string> ReadLine(absl::string_view) override {
    while (true) {
      size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      if (eof_) {
        if (buffer_.empty()) return std::nullopt;
        std::string line = std::move(buffer_);
        buffer_.clear();
        return line;
      }
      char chunk[4096];
      ssize_t n = ::read(fd_, chunk, sizeof(chunk));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        eof_ = true;
        continue;
      }
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buffer_;
  bool eof_ = false;
};

class PlainInteraction : public Interaction {
 public:
  explicit PlainInteraction(PlainOutput output) : output_(output) {}

  bool CanAsk() const override { return false; }
  void ShowText(absl::string_view text) override {
    if (output_.text_fd >= 0) WriteAll(output_.text_fd, text).IgnoreError();
  }
  void ShowRetry(absl::string_view reason) override {
    Notice(absl::StrCat("[retrying: ", reason, "]"));
  }
  void ShowToolCall(const ToolCallView& call) override {
    Notice(absl::StrCat("[", call.summary, "]"));
  }
  void ShowToolOutcome(const ToolOutcomeView& outcome) override {
    Notice(absl::StrCat("[", outcome.tool, ": ", outcome.outcome, "]"));
  }
  void ShowNotice(absl::string_view line) override { Notice(line); }
  PermissionAnswer AskPermission(const PermissionQuestion&) override {
    return PermissionAnswer::kNo;
  }

 private:
  void Notice(absl::string_view line) {
    if (output_.notice_fd < 0) return;
    WriteAll(output_.notice_fd, absl::StrCat(line, "\n")).IgnoreError();
  }
  PlainOutput output_;
};

}  // namespace

std::unique_ptr<LineSource> MakeFdLineSource(int fd) {
  return std::make_unique<FdLineSource>(fd);
}

std::unique_ptr<Interaction> MakePlainInteraction(PlainOutput output) {
  return std::make_unique<PlainInteraction>(output);
}

}  // namespace agent
}  // namespace garuda
