#include "lib/agent/terminal.h"

#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/base/visible.h"
#include "lib/consent/terminal_turn.h"
#include "lib/question/permission_question.h"
#include "lib/question/question.h"

namespace garuda {
namespace agent {
namespace {

// ---------------------------------------------------------------------------
// Text.

// How many bytes of `text` end on a whole UTF-8 sequence: a sequence cut at
// the end of a streamed piece waits for the next piece.
size_t CompleteUtf8Prefix(absl::string_view text) {
  size_t n = text.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    unsigned char c = static_cast<unsigned char>(text[n - back]);
    if ((c & 0xc0) == 0x80) continue;  // a continuation byte: look further
    size_t length = (c & 0xe0) == 0xc0   ? 2
                    : (c & 0xf0) == 0xe0 ? 3
                    : (c & 0xf8) == 0xf0 ? 4
                                         : 1;
    return length > back ? n - back : n;
  }
  return n;
}

bool WantColor(int out_fd) {
  if (::isatty(out_fd) != 1) return false;
  const char* term = std::getenv("TERM");
  if (term == nullptr || absl::string_view(term) == "dumb") return false;
  return std::getenv("NO_COLOR") == nullptr;
}

// ---------------------------------------------------------------------------
// The Interaction.

class TerminalInteraction : public Interaction {
 public:
  TerminalInteraction(int in_fd, int out_fd)
      : in_(in_fd), out_(out_fd), color_(WantColor(out_fd)) {}

  bool CanAsk() const override { return ::isatty(in_) == 1; }

  void ShowText(absl::string_view text) override {
    pending_.append(text.data(), text.size());
    size_t whole = CompleteUtf8Prefix(pending_);
    if (whole == 0) return;
    WriteText(terminal_internal::TerminalSafe(
        absl::string_view(pending_).substr(0, whole)));
    pending_.erase(0, whole);
  }

  void ShowRetry(absl::string_view reason) override {
    EndText();
    WriteText(absl::StrCat(
        Style("2"), "[retrying: ", terminal_internal::TerminalSafe(reason),
        "; the text above is void]", Style("0"), "\n"));
  }

  void ShowToolCall(const ToolCallView& call) override {
    EndText();
    WriteText(absl::StrCat(Style("36"), "-> ",
                           terminal_internal::TerminalSafe(
                               call.summary.empty() ? call.tool : call.summary),
                           Style("0"), "\n"));
  }

  void ShowToolOutcome(const ToolOutcomeView& outcome) override {
    EndText();
    WriteText(
        absl::StrCat(outcome.is_error ? Style("31") : Style("2"), "   ",
                     outcome.is_error ? "error: " : "",
                     terminal_internal::TerminalSafe(OneLine(outcome.outcome)),
                     Style("0"), "\n"));
  }

  void ShowNotice(absl::string_view line) override {
    EndText();
    WriteText(absl::StrCat(terminal_internal::TerminalSafe(line), "\n"));
  }

  PermissionAnswer AskPermission(const PermissionQuestion& question) override {
    EndText();
    PermissionAnswer answer =
        garuda::AskPermission(question, in_, out_, color_);
    at_line_start_ = true;
    return answer;
  }

  void HandOverTerminal() override {
    EndText();
    handover_.Save(in_);
  }

  // A helper that died during its question may have left its own group in
  // the foreground (a read would then stop the agent), and its terminal
  // settings (raw mode, no echo).
  void TakeBackTerminal() override {
    ReclaimTerminal(in_);
    handover_.Restore(in_);
    at_line_start_ = true;
  }

  Answer AskChangeSet(const ChangeSet& change_set,
                      const Rendered& rendered) override {
    EndText();
    return Ask(change_set, rendered, in_, out_);
  }

 private:
  static std::string OneLine(absl::string_view text) {
    std::string line(text.substr(0, text.find('\n')));
    if (line.size() < text.size()) line += " ...";
    return line;
  }

  std::string Style(absl::string_view code) const {
    return color_ ? absl::StrCat("\x1b[", code, "m") : std::string();
  }

  // The streamed text ends: a sequence still cut is shown as marks, and
  // what follows starts on its own line.
  void EndText() {
    if (!pending_.empty()) {
      WriteText(terminal_internal::TerminalSafe(pending_));
      pending_.clear();
    }
    if (!at_line_start_) WriteText("\n");
  }

  void WriteText(absl::string_view text) {
    if (text.empty()) return;
    (void)WriteAll(out_, text);
    // Style codes end with "m", never "\n": the last byte tells.
    at_line_start_ = text.back() == '\n';
  }

  int in_;
  int out_;
  bool color_;
  bool at_line_start_ = true;
  std::string pending_;
  TerminalHandover handover_;  // while a helper asks
};

}  // namespace

std::unique_ptr<Interaction> MakeTerminalInteraction(int in_fd, int out_fd) {
  return std::make_unique<TerminalInteraction>(in_fd, out_fd);
}

namespace terminal_internal {

std::string TerminalSafe(absl::string_view text) {
  return MakeTextVisible(text);
}

}  // namespace terminal_internal

}  // namespace agent
}  // namespace garuda
