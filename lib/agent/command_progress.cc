#include "lib/agent/command_progress.h"

#include "absl/strings/ascii.h"
#include "absl/time/clock.h"

namespace garuda {
namespace agent {
namespace {

constexpr absl::Duration kOutputRefresh = absl::Milliseconds(100);
constexpr size_t kLineKept = 4096;

}  // namespace

CommandWatch CommandProgressView::Watch(const CancelFlag* cancel) {
  CommandWatch watch;
  watch.cancel = cancel;
  watch.on_started = [this] { Started(); };
  watch.on_output = [this](int, absl::string_view data) { Output(data); };
  watch.on_tick = [this](absl::Duration elapsed) { Tick(elapsed); };
  return watch;
}

std::string CommandProgressView::last_line() {
  std::lock_guard<std::mutex> lock(mu_);
  return last_line_;
}

void CommandProgressView::Started() {
  std::lock_guard<std::mutex> lock(mu_);
  start_ = absl::Now();
  Show(start_);
}

void CommandProgressView::Output(absl::string_view data) {
  std::lock_guard<std::mutex> lock(mu_);
  for (char c : data) {
    if (c == '\n' || c == '\r') {
      if (!absl::StripAsciiWhitespace(partial_).empty()) last_line_ = partial_;
      partial_.clear();
    } else if (partial_.size() < kLineKept) {
      partial_.push_back(c);
    }
  }
  if (!absl::StripAsciiWhitespace(partial_).empty()) last_line_ = partial_;
  absl::Time now = absl::Now();
  if (now - last_shown_ >= kOutputRefresh) Show(now);
}

void CommandProgressView::Tick(absl::Duration) {
  std::lock_guard<std::mutex> lock(mu_);
  Show(absl::Now());
}

void CommandProgressView::Show(absl::Time now) {
  last_shown_ = now;
  CommandProgress progress;
  progress.elapsed = now - start_;
  progress.last_line = last_line_;
  display_->ShowCommandProgress(progress);
}

}  // namespace agent
}  // namespace garuda
