// The terminal's LineSource (terminal.h): prompts read with libedit, with
// history and the signal handling of terminal_signals.h.
#include <errno.h>
#include <fcntl.h>
#include <histedit.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <deque>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/base/visible.h"
#include "lib/terminal/terminal.h"
#include "lib/terminal/terminal_signals.h"

namespace garuda {
namespace terminal {
namespace {

using terminal_internal::ReadAnswer;
using terminal_internal::ScopedTerminalRestore;
using terminal_internal::SigintCatcher;

constexpr int kHistoryKept = 1000;
constexpr wchar_t kCtrlC = 3;
// A line break inside the line being edited (a paste, Alt-Enter, a line
// ending in "\\"): libedit edits one line, so it shows as this mark and
// becomes '\n' when the line is taken. A mark typed as such becomes a line
// break too.
constexpr wchar_t kLineBreakMark = 0x23ce;  // ⏎
constexpr char kLineBreakMarkUtf8[] = "\xe2\x8f\x8e";
constexpr size_t kMaxPaste = 1 << 20;
constexpr char kPasteEnd[] = "\x1b[201~";

// The line as the person meant it: each mark a line break.
std::string WithLineBreaks(absl::string_view edited) {
  return absl::StrReplaceAll(edited, {{kLineBreakMarkUtf8, "\n"}});
}

// The line as the editor shows it: each line break a mark.
std::string WithMarks(absl::string_view text) {
  return absl::StrReplaceAll(text, {{"\n", kLineBreakMarkUtf8}});
}

// Pasted bytes as the editor inserts them: UTF-8 decoded (an invalid
// sequence as U+FFFD), line ends (\r\n, \r, \n) as marks, tabs kept, any
// other control character as U+FFFD (it would be a key to the editor).
std::wstring PastedText(absl::string_view bytes) {
  std::wstring out;
  for (size_t i = 0; i < bytes.size();) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c == '\r' || c == '\n') {
      out.push_back(kLineBreakMark);
      i += (c == '\r' && i + 1 < bytes.size() && bytes[i + 1] == '\n') ? 2 : 1;
      continue;
    }
    if (c == '\t') {
      out.push_back(L'\t');
      ++i;
      continue;
    }
    if (c < 0x20 || c == 0x7f) {
      out.push_back(0xfffd);
      ++i;
      continue;
    }
    int length = c < 0x80             ? 1
                 : (c & 0xe0) == 0xc0 ? 2
                 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4
                                      : 0;
    bool valid = length > 0 && i + length <= bytes.size();
    uint32_t cp = length == 1   ? c
                  : length == 2 ? (c & 0x1f)
                  : length == 3 ? (c & 0x0f)
                                : (c & 0x07);
    for (int k = 1; valid && k < length; ++k) {
      unsigned char next = static_cast<unsigned char>(bytes[i + k]);
      if ((next & 0xc0) != 0x80) valid = false;
      cp = (cp << 6) | (next & 0x3f);
    }
    if (!valid) {
      out.push_back(0xfffd);
      ++i;
      continue;
    }
    out.push_back(static_cast<wchar_t>(cp));
    i += length;
  }
  return out;
}

// The length of the UTF-8 sequence a lead byte starts; 0 for a byte that
// cannot start one.
int Utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xe0) == 0xc0) return 2;
  if ((lead & 0xf0) == 0xe0) return 3;
  if ((lead & 0xf8) == 0xf0) return 4;
  return 0;
}

// ---------------------------------------------------------------------------
// The LineSource.

std::string EscapeHistoryLine(absl::string_view line) {
  std::string out;
  for (char c : line) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string UnescapeHistoryLine(absl::string_view line) {
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\' && i + 1 < line.size()) {
      ++i;
      out += line[i] == 'n' ? '\n' : line[i];
    } else {
      out += line[i];
    }
  }
  return out;
}

// libedit reads and shows wide characters through the C library's locale:
// without a UTF-8 LC_CTYPE, "é" would come back as nothing.
void EnsureUtf8Ctype() {
  const char* codeset = ::nl_langinfo(CODESET);
  if (codeset != nullptr && absl::string_view(codeset) == "UTF-8") return;
  if (::setlocale(LC_CTYPE, "") != nullptr) {
    codeset = ::nl_langinfo(CODESET);
    if (codeset != nullptr && absl::string_view(codeset) == "UTF-8") return;
  }
  ::setlocale(LC_CTYPE, "C.UTF-8");
}

FILE* DupFile(int fd, const char* mode) {
  int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (copy < 0) return nullptr;
  FILE* file = ::fdopen(copy, mode);
  if (file == nullptr) ::close(copy);
  return file;
}

// The prompt's history: libedit's list (up-arrow) and the file it is kept
// in, one escaped line each, appended as lines are taken.
class PromptHistory {
 public:
  PromptHistory() {
    history_ = ::history_init();
    HistEvent event;
    ::history(history_, &event, H_SETSIZE, kHistoryKept);
    ::history(history_, &event, H_SETUNIQUE, 1);
  }
  ~PromptHistory() {
    if (history_ != nullptr) ::history_end(history_);
  }
  PromptHistory(const PromptHistory&) = delete;
  PromptHistory& operator=(const PromptHistory&) = delete;

  History* list() { return history_; }

  // Loads `path` (created 0600) and keeps it open to append to. A problem
  // is a line for the person ("(history not kept: ...)"); "" when none.
  std::string Load(const std::string& path) {
    history_fd_ = UniqueFd(
        ::open(path.c_str(),
               O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!history_fd_) {
      return absl::StrCat("(history not kept: cannot open ",
                          terminal_internal::TerminalSafe(path), ": ",
                          strerror(errno), ")\n");
    }
    // A FIFO there would hang the read below (this process is its writer).
    absl::Status regular = CheckRegularFile(history_fd_.get(), path);
    if (!regular.ok()) {
      history_fd_.Reset();
      return absl::StrCat(
          "(history not kept: ",
          terminal_internal::TerminalSafe(std::string(regular.message())),
          ")\n");
    }
    // The history is the person's own typing: only they may read it.
    (void)::fchmod(history_fd_.get(), 0600);
    absl::StatusOr<std::string> content = ReadAll(history_fd_.get());
    if (!content.ok()) return "";
    std::vector<absl::string_view> lines =
        absl::StrSplit(*content, '\n', absl::SkipEmpty());
    size_t first =
        lines.size() > kHistoryKept ? lines.size() - kHistoryKept : 0;
    HistEvent event;
    for (size_t i = first; i < lines.size(); ++i) {
      ::history(history_, &event, H_ENTER,
                WithMarks(UnescapeHistoryLine(lines[i])).c_str());
    }
    // Twice the size kept: write the kept part back, so the file does not
    // grow for ever.
    if (lines.size() > 2 * static_cast<size_t>(kHistoryKept)) {
      std::string kept;
      for (size_t i = first; i < lines.size(); ++i) {
        absl::StrAppend(&kept, lines[i], "\n");
      }
      if (::ftruncate(history_fd_.get(), 0) == 0) {
        (void)WriteAll(history_fd_.get(), kept);
      }
    }
    return "";
  }

  // A line taken at the prompt: kept unless it is empty or starts with a
  // space.
  void Remember(const std::string& line) {
    if (line.empty() || line[0] == ' ' ||
        absl::StripAsciiWhitespace(line).empty()) {
      return;
    }
    HistEvent event;
    ::history(history_, &event, H_ENTER, line.c_str());
    if (history_fd_) {
      // One write per line with O_APPEND: a crash keeps every earlier line.
      (void)WriteAll(
          history_fd_.get(),
          absl::StrCat(EscapeHistoryLine(WithLineBreaks(line)), "\n"));
    }
  }

 private:
  History* history_ = nullptr;
  UniqueFd history_fd_;
};

class TerminalLineSource : public LineSource {
 public:
  TerminalLineSource(int in_fd, int out_fd, const std::string& history_path,
                     CancelFlag* cancel)
      : in_(in_fd), out_(out_fd), cancel_(cancel), catcher_(cancel) {
    EnsureUtf8Ctype();
    in_file_ = DupFile(in_fd, "r");
    out_file_ = DupFile(out_fd, "w");
    if (!history_path.empty()) Write(history_.Load(history_path));
    if (in_file_ != nullptr && out_file_ != nullptr) {
      editor_ = ::el_init_fd("garuda-agent", in_file_, out_file_, out_file_,
                             in_fd, out_fd, out_fd);
    }
    if (editor_ != nullptr) {
      ::el_set(editor_, EL_CLIENTDATA, this);
      ::el_set(editor_, EL_EDITOR, "emacs");
      ::el_set(editor_, EL_HIST, history, history_.list());
      ::el_set(editor_, EL_PROMPT, &TerminalLineSource::Prompt);
      ::el_set(editor_, EL_GETCFN, &TerminalLineSource::GetChar);
      ::el_set(editor_, EL_ADDFN, "garuda-interrupt",
               "Ctrl-C: clear the line, or leave",
               &TerminalLineSource::OnCtrlC);
      ::el_set(editor_, EL_BIND, "^C", "garuda-interrupt", nullptr);
      // Bracketed paste: the whole paste is one insertion, its line breaks
      // kept as marks, never taken as Enter.
      ::el_set(editor_, EL_ADDFN, "garuda-paste", "insert a paste as it is",
               &TerminalLineSource::OnPaste);
      ::el_set(editor_, EL_BIND, "\033[200~", "garuda-paste", nullptr);
      // Alt-Enter: a line break; Enter after a final backslash: the same.
      ::el_set(editor_, EL_ADDFN, "garuda-line-break", "a new line",
               &TerminalLineSource::OnLineBreak);
      ::el_set(editor_, EL_BIND, "\033\r", "garuda-line-break", nullptr);
      ::el_set(editor_, EL_BIND, "\033\n", "garuda-line-break", nullptr);
      ::el_set(editor_, EL_ADDFN, "garuda-enter",
               "take the line, or a line break after a backslash",
               &TerminalLineSource::OnEnter);
      ::el_set(editor_, EL_BIND, "^M", "garuda-enter", nullptr);
      ::el_set(editor_, EL_BIND, "^J", "garuda-enter", nullptr);
    }
    const char* term = std::getenv("TERM");
    marks_pastes_ = ::isatty(out_fd) == 1 && term != nullptr &&
                    absl::string_view(term) != "dumb";
  }

  ~TerminalLineSource() override {
    if (editor_ != nullptr) ::el_end(editor_);
    if (in_file_ != nullptr) ::fclose(in_file_);
    if (out_file_ != nullptr) ::fclose(out_file_);
  }

  std::optional<std::string> ReadLine(absl::string_view prompt) override {
    // A Ctrl-C that came while the session was busy (it cancelled the
    // request): one more at the empty prompt leaves.
    if (catcher_.ok() && catcher_.Drain().interrupts > 0) armed_ = true;
    if (cancel_ != nullptr) {
      if (cancel_->cancelled()) armed_ = true;
      cancel_->Reset();
    }
    catcher_.set_busy(false);
    prompt_ = terminal_internal::TerminalSafe(prompt);
    if (editor_ == nullptr) {
      // No line editor (libedit could not start on this terminal): plain
      // lines, without editing or history; Ctrl-C or the end leaves.
      Write(prompt_);
      std::string line;
      if (!ReadAnswer(in_, &catcher_, &line, 1 << 20)) return std::nullopt;
      catcher_.set_busy(true);
      return line;
    }
    std::optional<std::string> result;
    {
      ScopedTerminalRestore restore(in_);
      if (marks_pastes_) restore.MarkPastes(out_);
      for (;;) {
        interrupted_ = false;
        taking_line_ = false;
        int count = 0;
        // The terminal in libedit's mode before the prompt shows: keys
        // typed after it are then read by the editor, never echoed and
        // kept (or, for Ctrl-C, flushed) by the terminal's cooked mode.
        ::el_set(editor_, EL_PREP_TERM, 1);
        const char* line = ::el_gets(editor_, &count);
        if (interrupted_) {
          Write("^C\n");
          if (line_had_text_) {
            armed_ = false;
            continue;
          }
          if (armed_) break;
          armed_ = true;
          Write("(Ctrl-C again to leave, or /exit)\n");
          continue;
        }
        if (line == nullptr || count <= 0) {
          if (count < 0 && errno == EINTR) continue;
          Write("\n");
          break;
        }
        std::string text(line, static_cast<size_t>(count));
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
          text.pop_back();
        }
        armed_ = false;
        history_.Remember(text);
        result = WithLineBreaks(text);
        break;
      }
    }
    if (result) catcher_.set_busy(true);
    return result;
  }

 private:
  static TerminalLineSource* Self(EditLine* editor) {
    void* data = nullptr;
    ::el_get(editor, EL_CLIENTDATA, &data);
    return static_cast<TerminalLineSource*>(data);
  }

  static char* Prompt(EditLine* editor) {
    return const_cast<char*>(Self(editor)->prompt_.c_str());
  }

  // After ESC [200~: the paste's bytes up to ESC [201~, read here from the
  // terminal (they are in its buffer already; a terminal that never ends
  // the paste is waited for at most kPasteWaitMs between two bytes).
  static unsigned char OnPaste(EditLine* editor, int) {
    constexpr int kPasteWaitMs = 2000;
    TerminalLineSource* self = Self(editor);
    std::string bytes;
    bool cut = false;
    for (;;) {
      struct pollfd fd = {self->in_, POLLIN, 0};
      int ready = ::poll(&fd, 1, kPasteWaitMs);
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) break;
      char c;
      ssize_t n = ::read(self->in_, &c, 1);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n <= 0) break;
      bytes.push_back(c);
      if (absl::EndsWith(bytes, kPasteEnd)) {
        bytes.resize(bytes.size() - (sizeof kPasteEnd - 1));
        break;
      }
      if (bytes.size() > kMaxPaste + sizeof kPasteEnd) {
        // Past the cap: keep the tail that may hold the end mark only.
        bytes.erase(kMaxPaste,
                    bytes.size() - kMaxPaste - (sizeof kPasteEnd - 1));
        cut = true;
      }
    }
    if (cut) {
      bytes.resize(std::min(bytes.size(), kMaxPaste));
      bytes += absl::StrCat(" [the paste was cut at ", kMaxPaste, " bytes]");
    }
    std::wstring text = PastedText(bytes);
    if (!text.empty()) ::el_winsertstr(editor, text.c_str());
    return CC_REFRESH;
  }

  static unsigned char OnLineBreak(EditLine* editor, int) {
    const wchar_t mark[] = {kLineBreakMark, 0};
    ::el_winsertstr(editor, mark);
    return CC_REFRESH;
  }

  static unsigned char OnEnter(EditLine* editor, int) {
    TerminalLineSource* self = Self(editor);
    const LineInfoW* info = ::el_wline(editor);
    if (info != nullptr && info->cursor != info->lastchar) {
      // Enter inside the line: the cursor goes to its end first (libedit
      // moves the screen's cursor after CC_CURSOR), then the same Enter
      // again, which takes the line as it is (a backslash before the old
      // cursor breaks nothing).
      ::el_cursor(editor, static_cast<int>(info->lastchar - info->cursor));
      self->taking_line_ = true;
      ::el_wpush(editor, L"\r");
      return CC_CURSOR;
    }
    if (!self->taking_line_ && info != nullptr && info->cursor > info->buffer &&
        info->cursor[-1] == L'\\') {
      ::el_wdeletestr(editor, 1);
      return OnLineBreak(editor, 0);
    }
    self->taking_line_ = false;
    // libedit's own Enter moves below the line before it returns it; a
    // function bound in its place has to, or what the session prints next
    // continues the person's line ("> fix the typoLet me look").
    ::fflush(self->out_file_);
    self->Write("\n");
    return CC_NEWLINE;
  }

  static unsigned char OnCtrlC(EditLine* editor, int) {
    TerminalLineSource* self = Self(editor);
    const LineInfoW* info = ::el_wline(editor);
    self->line_had_text_ = info != nullptr && info->lastchar != info->buffer;
    self->interrupted_ = true;
    return CC_EOF;
  }

  // libedit's read function: the terminal and the Ctrl-C pipe at once,
  // UTF-8 decoded here. 1: a character; 0: end of input; -1: an error.
  static int GetChar(EditLine* editor, wchar_t* out) {
    TerminalLineSource* self = Self(editor);
    std::string bytes;
    for (;;) {
      struct pollfd fds[2] = {{self->in_, POLLIN, 0},
                              {self->catcher_.fd(), POLLIN, 0}};
      int ready = ::poll(fds, self->catcher_.ok() ? 2 : 1, -1);
      if (ready < 0) {
        if (errno == EINTR) continue;
        return -1;
      }
      if (self->catcher_.ok() && (fds[1].revents & POLLIN) != 0) {
        SigintCatcher::Pending pending = self->catcher_.Drain();
        if (pending.interrupts > 0) {
          *out = kCtrlC;
          return 1;
        }
        if (pending.resumed) {
          // Continued after Ctrl-Z: the shell had the terminal meanwhile.
          ::el_set(editor, EL_PREP_TERM, 0);
          ::el_set(editor, EL_PREP_TERM, 1);
          if (self->marks_pastes_) {
            (void)WriteAll(self->out_, "\x1b[?2004h");
          }
          ::el_set(editor, EL_REFRESH);
        } else if (pending.resized) {
          ::el_resize(editor);
          ::el_set(editor, EL_REFRESH);
        }
        continue;
      }
      unsigned char c;
      ssize_t n = ::read(self->in_, &c, 1);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (n < 0) return -1;
      if (n == 0) return 0;
      bytes.push_back(static_cast<char>(c));
      int length = Utf8Length(static_cast<unsigned char>(bytes[0]));
      if (length == 0 || (bytes.size() > 1 && (c & 0xc0) != 0x80)) {
        *out = 0xfffd;  // not UTF-8: shown as the replacement character
        return 1;
      }
      if (static_cast<int>(bytes.size()) < length) continue;
      uint32_t cp = length == 1   ? bytes[0]
                    : length == 2 ? (bytes[0] & 0x1f)
                    : length == 3 ? (bytes[0] & 0x0f)
                                  : (bytes[0] & 0x07);
      for (int i = 1; i < length; ++i) cp = (cp << 6) | (bytes[i] & 0x3f);
      *out = static_cast<wchar_t>(cp);
      return 1;
    }
  }

  void Write(absl::string_view text) { (void)WriteAll(out_, text); }

  // An Enter inside the line was pushed again once the cursor reached its
  // end (OnEnter).
  bool taking_line_ = false;

  int in_;
  int out_;
  CancelFlag* cancel_;
  SigintCatcher catcher_;
  FILE* in_file_ = nullptr;
  FILE* out_file_ = nullptr;
  PromptHistory history_;
  EditLine* editor_ = nullptr;
  std::string prompt_;
  bool interrupted_ = false;
  bool line_had_text_ = false;
  bool armed_ = false;
  bool marks_pastes_ = false;
};

}  // namespace

std::unique_ptr<LineSource> MakeTerminalLineSource(
    const std::string& history_path, CancelFlag* cancel) {
  return terminal_internal::MakeTerminalLineSourceOn(
      STDIN_FILENO, STDOUT_FILENO, history_path, cancel);
}

namespace terminal_internal {

std::unique_ptr<LineSource> MakeTerminalLineSourceOn(
    int in_fd, int out_fd, const std::string& history_path,
    CancelFlag* cancel) {
  return std::make_unique<TerminalLineSource>(in_fd, out_fd, history_path,
                                              cancel);
}

}  // namespace terminal_internal

}  // namespace terminal
}  // namespace garuda
