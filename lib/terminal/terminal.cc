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
// The pieces of the screen.

// Writes to the terminal, and knows whether the cursor is at a line's start
// and whether the terminal takes colours.
class ScreenWriter {
 public:
  ScreenWriter(int out_fd, bool color) : out_(out_fd), color_(color) {}

  bool color() const { return color_; }
  int fd() const { return out_; }
  bool at_line_start() const { return at_line_start_; }
  // After something else wrote to the terminal and ended its line (a
  // question).
  void AtLineStart() { at_line_start_ = true; }

  // An SGR code ("2" dim, "31" red...), or nothing without colours.
  std::string Style(absl::string_view code) const {
    return color_ ? absl::StrCat("\x1b[", code, "m") : std::string();
  }

  void Write(absl::string_view text) {
    if (text.empty()) return;
    (void)WriteAll(out_, text);
    // Style codes end with "m", never "\n": the last byte tells.
    at_line_start_ = text.back() == '\n';
  }

  // Written without changing where a line starts: the live line of a
  // command, rewritten in place.
  void Overwrite(absl::string_view text) { (void)WriteAll(out_, text); }

  size_t Columns() const {
    struct winsize size = {};
    if (::ioctl(out_, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
      return size.ws_col;
    }
    return 80;
  }

 private:
  int out_;
  bool color_;
  bool at_line_start_ = true;
};

// The model's streamed text: whole UTF-8 sequences only, made safe, and
// formatted as markdown where the terminal has colours (a line at a time).
class ModelTextStream {
 public:
  explicit ModelTextStream(ScreenWriter* screen) : screen_(screen) {}

  void Feed(absl::string_view text) {
    pending_.append(text.data(), text.size());
    size_t whole = CompleteUtf8Prefix(pending_);
    if (whole == 0) return;
    Write(terminal_internal::TerminalSafe(
        absl::string_view(pending_).substr(0, whole)));
    pending_.erase(0, whole);
  }

  // The streamed text ends: a sequence still cut is shown as marks, and
  // what follows starts on its own line.
  void End() {
    if (!pending_.empty()) {
      Write(terminal_internal::TerminalSafe(pending_));
      pending_.clear();
    }
    if (screen_->color()) screen_->Write(markdown_.Finish());
    if (!screen_->at_line_start()) screen_->Write("\n");
  }

 private:
  void Write(const std::string& safe) {
    screen_->Write(screen_->color() ? markdown_.Feed(safe) : safe);
  }

  ScreenWriter* screen_;
  std::string pending_;
  MarkdownRenderer markdown_;
};

// The running command's one line, rewritten in place (a terminal that
// takes colours takes \r and erase-line too); nothing on a dumb one: the
// outcome shows the output.
class ProgressLine {
 public:
  explicit ProgressLine(ScreenWriter* screen) : screen_(screen) {}

  void Show(const CommandProgress& progress) {
    if (!screen_->color()) return;
    std::string line = absl::StrCat("   ... ", Elapsed(progress.elapsed));
    if (!progress.last_line.empty()) {
      std::string last = terminal_internal::TerminalSafe(progress.last_line);
      const size_t columns = screen_->Columns();
      const size_t room =
          columns > line.size() + 8 ? columns - line.size() - 8 : 0;
      if (last.size() > room) {
        last.resize(
            CompleteUtf8Prefix(absl::string_view(last).substr(0, room)));
      }
      absl::StrAppend(&line, "  ", last);
    }
    screen_->Overwrite(absl::StrCat("\r\x1b[2K", screen_->Style("2"), line,
                                    screen_->Style("0")));
    shown_ = true;
  }

  // Before anything else is printed.
  void End() {
    if (!shown_) return;
    screen_->Overwrite("\r\x1b[2K");
    shown_ = false;
  }

 private:
  static std::string Elapsed(absl::Duration elapsed) {
    int64_t seconds = absl::ToInt64Seconds(elapsed);
    if (seconds < 60) return absl::StrCat(seconds, "s");
    return absl::StrCat(seconds / 60, "m ",
                        absl::Dec(seconds % 60, absl::kZeroPad2), "s");
  }

  ScreenWriter* screen_;
  bool shown_ = false;
};

// A command's output under its call: its last lines, with how many came
// before; the whole of the last one for /output.
class CommandOutput {
 public:
  explicit CommandOutput(ScreenWriter* screen) : screen_(screen) {}

  void ShowTail(absl::string_view output) {
    last_output_ = std::string(output);
    OutputTail tail = LastLines(output, kOutputTailLines);
    std::string text;
    if (tail.lines_cut > 0) {
      absl::StrAppend(&text, screen_->Style("2"), "   | ... ", tail.lines_cut,
                      tail.lines_cut == 1 ? " earlier line" : " earlier lines",
                      " not shown (/output shows all ", tail.total_lines, ")",
                      screen_->Style("0"), "\n");
    }
    absl::string_view body(tail.text);
    body.remove_suffix(1);
    for (absl::string_view line : absl::StrSplit(body, '\n')) {
      absl::StrAppend(&text, Line(line));
    }
    screen_->Write(text);
  }

  bool has_last() const { return !last_output_.empty(); }

  void ShowLast() {
    std::string text;
    for (absl::string_view line :
         absl::StrSplit(absl::string_view(last_output_)
                            .substr(0, last_output_.size() -
                                           (last_output_.back() == '\n')),
                        '\n')) {
      absl::StrAppend(&text, Line(line));
    }
    screen_->Write(text);
  }

 private:
  // One line of a command's output, marked as such and made visible; a
  // line longer than kOutputLineChars is cut.
  std::string Line(absl::string_view line) const {
    std::string shown(line.substr(0, kOutputLineChars));
    shown.resize(CompleteUtf8Prefix(shown));
    if (line.size() > kOutputLineChars) shown += " ...";
    return absl::StrCat(screen_->Style("2"), "   | ", screen_->Style("0"),
                        terminal_internal::TerminalSafe(shown), "\n");
  }

  ScreenWriter* screen_;
  std::string last_output_;  // the last command's, for /output
};

// ---------------------------------------------------------------------------
// The Interaction: the session's events, each ending the streamed text and
// the progress line before it writes.

class TerminalInteraction : public Interaction {
 public:
  TerminalInteraction(int in_fd, int out_fd, bool plain)
      : in_(in_fd),
        screen_(out_fd, !plain && TerminalHasColors(out_fd)),
        text_(&screen_),
        progress_(&screen_),
        output_(&screen_) {}

  bool CanAsk() const override { return ::isatty(in_) == 1; }

  void ShowText(absl::string_view text) override { text_.Feed(text); }

  void ShowRetry(absl::string_view reason) override {
    Line("2",
         absl::StrCat("[retrying: ", terminal_internal::TerminalSafe(reason),
                      "; the text above is void]"));
  }

  void ShowToolCall(const ToolCallView& call) override {
    Line("36", absl::StrCat("-> ", terminal_internal::TerminalSafe(
                                       call.summary.empty() ? call.tool
                                                            : call.summary)));
  }

  void ShowToolOutcome(const ToolOutcomeView& outcome) override {
    EndText();
    if (!outcome.output.empty()) output_.ShowTail(outcome.output);
    std::string line(outcome.outcome.substr(0, outcome.outcome.find('\n')));
    if (line.size() < outcome.outcome.size()) line += " ...";
    Line(outcome.is_error  ? "31"
         : outcome.stopped ? "33"
                           : "2",
         absl::StrCat("   ", outcome.is_error ? "error: " : "",
                      terminal_internal::TerminalSafe(line)));
  }

  void ShowNotice(absl::string_view line) override {
    EndText();
    screen_.Write(absl::StrCat(terminal_internal::TerminalSafe(line), "\n"));
  }

  void ShowCommandProgress(const CommandProgress& progress) override {
    progress_.Show(progress);
  }

  bool ShowLastOutput() override {
    if (!output_.has_last()) return false;
    EndText();
    output_.ShowLast();
    return true;
  }

  void ShowStatusLine(absl::string_view line) override {
    Line("2", terminal_internal::TerminalSafe(line));
  }

  PermissionAnswer AskPermission(const PermissionQuestion& question) override {
    EndText();
    PermissionAnswer answer =
        garuda::AskPermission(question, in_, screen_.fd(), screen_.color());
    screen_.AtLineStart();
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
    screen_.AtLineStart();
  }

 private:
  void EndText() {
    progress_.End();
    text_.End();
  }

  // One line of ours in `style`, after the streamed text.
  void Line(absl::string_view style, absl::string_view safe) {
    EndText();
    screen_.Write(
        absl::StrCat(screen_.Style(style), safe, screen_.Style("0"), "\n"));
  }

  int in_;
  ScreenWriter screen_;
  ModelTextStream text_;
  ProgressLine progress_;
  CommandOutput output_;
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
