#include "lib/terminal/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/files.h"
#include "lib/base/visible.h"
#include "lib/consent/terminal_turn.h"
#include "lib/question/permission_question.h"
#include "lib/question/screen.h"
#include "lib/terminal/markdown.h"
#include "lib/terminal/output_tail.h"

namespace garuda {
namespace terminal {
namespace {

using agent::CommandProgress;
using agent::ToolCallView;
using agent::ToolOutcomeView;

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

// A command's output under its call: the last lines, each cut at a width.
constexpr size_t kOutputTailLines = 10;
constexpr size_t kOutputLineChars = 1000;

// ---------------------------------------------------------------------------
// The Interaction.

class TerminalInteraction : public Interaction {
 public:
  TerminalInteraction(int in_fd, int out_fd, bool plain)
      : in_(in_fd), out_(out_fd), color_(!plain && TerminalHasColors(out_fd)) {}

  bool CanAsk() const override { return ::isatty(in_) == 1; }

  void ShowText(absl::string_view text) override {
    pending_.append(text.data(), text.size());
    size_t whole = CompleteUtf8Prefix(pending_);
    if (whole == 0) return;
    WriteModelText(terminal_internal::TerminalSafe(
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
    if (!outcome.output.empty()) {
      last_output_ = outcome.output;
      ShowOutputTail(outcome.output);
    }
    WriteText(
        absl::StrCat(outcome.is_error  ? Style("31")
                     : outcome.stopped ? Style("33")
                                       : Style("2"),
                     "   ", outcome.is_error ? "error: " : "",
                     terminal_internal::TerminalSafe(OneLine(outcome.outcome)),
                     Style("0"), "\n"));
  }

  void ShowNotice(absl::string_view line) override {
    EndText();
    WriteText(absl::StrCat(terminal_internal::TerminalSafe(line), "\n"));
  }

  // One line rewritten in place (a terminal that takes colours takes \r and
  // erase-line too); nothing on a dumb one: the outcome shows the output.
  void ShowCommandProgress(const CommandProgress& progress) override {
    if (!color_) return;
    std::string line = absl::StrCat("   ... ", Elapsed(progress.elapsed));
    if (!progress.last_line.empty()) {
      std::string last = terminal_internal::TerminalSafe(progress.last_line);
      const size_t room =
          Columns() > line.size() + 8 ? Columns() - line.size() - 8 : 0;
      if (last.size() > room) {
        last.resize(
            CompleteUtf8Prefix(absl::string_view(last).substr(0, room)));
      }
      absl::StrAppend(&line, "  ", last);
    }
    (void)WriteAll(out_,
                   absl::StrCat("\r\x1b[2K", Style("2"), line, Style("0")));
    progress_shown_ = true;
  }

  bool ShowLastOutput() override {
    if (last_output_.empty()) return false;
    EndText();
    std::string text;
    for (absl::string_view line :
         absl::StrSplit(absl::string_view(last_output_)
                            .substr(0, last_output_.size() -
                                           (last_output_.back() == '\n')),
                        '\n')) {
      absl::StrAppend(&text, OutputLine(line));
    }
    WriteText(text);
    return true;
  }

  void ShowStatusLine(absl::string_view line) override {
    EndText();
    WriteText(absl::StrCat(Style("2"), terminal_internal::TerminalSafe(line),
                           Style("0"), "\n"));
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

 private:
  static std::string OneLine(absl::string_view text) {
    std::string line(text.substr(0, text.find('\n')));
    if (line.size() < text.size()) line += " ...";
    return line;
  }

  static std::string Elapsed(absl::Duration elapsed) {
    int64_t seconds = absl::ToInt64Seconds(elapsed);
    if (seconds < 60) return absl::StrCat(seconds, "s");
    return absl::StrCat(seconds / 60, "m ",
                        absl::Dec(seconds % 60, absl::kZeroPad2), "s");
  }

  size_t Columns() const {
    struct winsize size = {};
    if (::ioctl(out_, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
      return size.ws_col;
    }
    return 80;
  }

  // The progress line goes before anything else is printed.
  void EndProgress() {
    if (!progress_shown_) return;
    (void)WriteAll(out_, "\r\x1b[2K");
    progress_shown_ = false;
  }

  // One line of a command's output, marked as such and made visible; a
  // line longer than kOutputLineChars is cut.
  std::string OutputLine(absl::string_view line) const {
    std::string shown(line.substr(0, kOutputLineChars));
    shown.resize(CompleteUtf8Prefix(shown));
    if (line.size() > kOutputLineChars) shown += " ...";
    return absl::StrCat(Style("2"), "   | ", Style("0"),
                        terminal_internal::TerminalSafe(shown), "\n");
  }

  // The last lines of a command's output, and how many came before them.
  void ShowOutputTail(absl::string_view output) {
    OutputTail tail = LastLines(output, kOutputTailLines);
    std::string text;
    if (tail.lines_cut > 0) {
      absl::StrAppend(&text, Style("2"), "   | ... ", tail.lines_cut,
                      tail.lines_cut == 1 ? " earlier line" : " earlier lines",
                      " not shown (/output shows all ", tail.total_lines, ")",
                      Style("0"), "\n");
    }
    absl::string_view body(tail.text);
    body.remove_suffix(1);
    for (absl::string_view line : absl::StrSplit(body, '\n')) {
      absl::StrAppend(&text, OutputLine(line));
    }
    WriteText(text);
  }

  std::string Style(absl::string_view code) const {
    return color_ ? absl::StrCat("\x1b[", code, "m") : std::string();
  }

  // The streamed text ends: a sequence still cut is shown as marks, and
  // what follows starts on its own line.
  void EndText() {
    EndProgress();
    if (!pending_.empty()) {
      WriteModelText(terminal_internal::TerminalSafe(pending_));
      pending_.clear();
    }
    if (color_) WriteText(markdown_.Finish());
    if (!at_line_start_) WriteText("\n");
  }

  // The model's text, made safe: formatted where the terminal has colours
  // (a line at a time), else as written.
  void WriteModelText(const std::string& safe) {
    WriteText(color_ ? markdown_.Feed(safe) : safe);
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
  bool progress_shown_ = false;
  MarkdownRenderer markdown_;
  std::string last_output_;    // the last command's, for /output
  TerminalHandover handover_;  // while a helper asks
};

}  // namespace

std::unique_ptr<Interaction> MakeTerminalInteraction(int in_fd, int out_fd,
                                                     bool plain) {
  return std::make_unique<TerminalInteraction>(in_fd, out_fd, plain);
}

namespace terminal_internal {

std::string TerminalSafe(absl::string_view text) {
  return MakeTextVisible(text);
}

}  // namespace terminal_internal

}  // namespace terminal
}  // namespace garuda
