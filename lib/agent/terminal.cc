#include "lib/agent/terminal.h"

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
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/base/visible.h"

namespace garuda {
namespace agent {
namespace {

constexpr int kHistoryKept = 1000;
constexpr wchar_t kCtrlC = 3;

// ---------------------------------------------------------------------------
// SIGINT: a handler that writes to a pipe (so a signal that lands just
// before a poll is not lost) and, while the session is busy with a request,
// sets the CancelFlag. Catchers nest: a question inside a session installs
// its own and puts the previous one back. The same pipe carries the news of
// a continue after Ctrl-Z and of a resized window to the line editor.

class SigintCatcher;
std::atomic<SigintCatcher*> active_catcher{nullptr};
constexpr char kResumedByte = 'z';
constexpr char kResizedByte = 'w';

class SigintCatcher {
 public:
  explicit SigintCatcher(CancelFlag* cancel) : cancel_(cancel) {
    if (::pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
      pipe_[0] = pipe_[1] = -1;
      return;
    }
    previous_catcher_ = active_catcher.exchange(this);
    struct sigaction action = {};
    action.sa_handler = &SigintCatcher::Handler;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &previous_action_);
    // A parent may have started us with SIGINT blocked; Ctrl-C must still
    // reach the prompt.
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, SIGINT);
    ::pthread_sigmask(SIG_UNBLOCK, &unblock, &previous_mask_);
    installed_ = true;
  }

  ~SigintCatcher() {
    if (installed_) {
      ::sigaction(SIGINT, &previous_action_, nullptr);
      ::pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
      active_catcher.store(previous_catcher_);
    }
    for (int fd : pipe_) {
      if (fd >= 0) ::close(fd);
    }
  }

  SigintCatcher(const SigintCatcher&) = delete;
  SigintCatcher& operator=(const SigintCatcher&) = delete;

  bool ok() const { return installed_; }
  int fd() const { return pipe_[0]; }
  void set_busy(bool busy) { busy_.store(busy); }

  struct Pending {
    int interrupts = 0;    // Ctrl-C
    bool resumed = false;  // continued after Ctrl-Z
    bool resized = false;  // the window changed size
  };
  // What arrived since the last call.
  Pending Drain() {
    Pending pending;
    char buffer[64];
    for (;;) {
      ssize_t n = ::read(pipe_[0], buffer, sizeof(buffer));
      if (n > 0) {
        for (ssize_t i = 0; i < n; ++i) {
          if (buffer[i] == kResumedByte) {
            pending.resumed = true;
          } else if (buffer[i] == kResizedByte) {
            pending.resized = true;
          } else {
            ++pending.interrupts;
          }
        }
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      return pending;
    }
  }

  // From a signal handler: the process was continued after a stop
  // (kResumedByte), or the window changed size (kResizedByte).
  static void Notify(char what) {
    SigintCatcher* catcher = active_catcher.load();
    if (catcher != nullptr) (void)!::write(catcher->pipe_[1], &what, 1);
  }

 private:
  static void Handler(int) {
    int saved_errno = errno;
    SigintCatcher* catcher = active_catcher.load();
    if (catcher != nullptr) {
      if (catcher->busy_.load() && catcher->cancel_ != nullptr) {
        catcher->cancel_->Cancel();
      }
      (void)!::write(catcher->pipe_[1], "x", 1);
    }
    errno = saved_errno;
  }

  CancelFlag* cancel_;
  int pipe_[2] = {-1, -1};
  bool installed_ = false;
  std::atomic<bool> busy_{false};
  SigintCatcher* previous_catcher_ = nullptr;
  struct sigaction previous_action_ = {};
  sigset_t previous_mask_;
};

// While libedit has the terminal in its own mode, a signal that ends the
// process (SIGTERM, SIGHUP, SIGQUIT, and a crash: SIGABRT, SIGSEGV, SIGBUS,
// SIGILL, SIGFPE) first puts the saved settings back, then does what it did
// before: its previous disposition is put back and the signal raised again,
// to be taken once this handler returns (a fault simply happens again).
struct TerminalRestore {
  std::atomic<bool> armed{false};
  int fd = -1;
  struct termios settings;
};
TerminalRestore terminal_restore;
constexpr int kRestoreSignals[] = {SIGTERM, SIGHUP, SIGQUIT, SIGABRT,
                                   SIGSEGV, SIGBUS, SIGILL,  SIGFPE};
constexpr int kRestoreSignalCount = sizeof(kRestoreSignals) / sizeof(int);
struct sigaction previous_restore_actions[kRestoreSignalCount];
struct sigaction previous_stop_action;
struct sigaction previous_resize_action;

void OnResize(int) {
  int saved_errno = errno;
  SigintCatcher::Notify(kResizedByte);
  errno = saved_errno;
}

void RestoreTerminalAndResignal(int signal_number) {
  int saved_errno = errno;
  if (terminal_restore.armed.exchange(false)) {
    ::tcsetattr(terminal_restore.fd, TCSANOW, &terminal_restore.settings);
  }
  for (int i = 0; i < kRestoreSignalCount; ++i) {
    if (kRestoreSignals[i] != signal_number) continue;
    ::sigaction(signal_number, &previous_restore_actions[i], nullptr);
    ::raise(signal_number);
  }
  errno = saved_errno;
}

// Ctrl-Z while a line is edited: the shell gets the terminal back in its
// own settings, the process stops as it would have, and once continued the
// editor is told (through the Ctrl-C pipe) to take the terminal again and
// redraw the line.
void StopWithTerminalRestored(int) {
  int saved_errno = errno;
  if (terminal_restore.armed.load()) {
    ::tcsetattr(terminal_restore.fd, TCSANOW, &terminal_restore.settings);
  }
  struct sigaction stop = {}, mine;
  stop.sa_handler = SIG_DFL;
  sigemptyset(&stop.sa_mask);
  ::sigaction(SIGTSTP, &stop, &mine);
  sigset_t unblock, previous_mask;
  sigemptyset(&unblock);
  sigaddset(&unblock, SIGTSTP);
  ::sigprocmask(SIG_UNBLOCK, &unblock, &previous_mask);
  ::raise(SIGTSTP);  // stopped here until SIGCONT
  ::sigprocmask(SIG_SETMASK, &previous_mask, nullptr);
  ::sigaction(SIGTSTP, &mine, nullptr);
  SigintCatcher::Notify(kResumedByte);
  errno = saved_errno;
}

class ScopedTerminalRestore {
 public:
  explicit ScopedTerminalRestore(int fd) {
    if (::tcgetattr(fd, &terminal_restore.settings) != 0) return;
    terminal_restore.fd = fd;
    terminal_restore.armed.store(true);
    struct sigaction action = {};
    action.sa_handler = RestoreTerminalAndResignal;
    sigemptyset(&action.sa_mask);
    for (int i = 0; i < kRestoreSignalCount; ++i) {
      ::sigaction(kRestoreSignals[i], nullptr, &previous_restore_actions[i]);
      // An ignored signal stays ignored: it ends nothing.
      if (previous_restore_actions[i].sa_handler == SIG_IGN) continue;
      ::sigaction(kRestoreSignals[i], &action, nullptr);
    }
    // The window's size, for the editor to redraw the line while it is
    // edited (libedit asks for it itself only at the start of a line).
    action.sa_handler = OnResize;
    ::sigaction(SIGWINCH, &action, &previous_resize_action);
    ::sigaction(SIGTSTP, nullptr, &previous_stop_action);
    // Ignored (a shell without job control started us): Ctrl-Z does nothing.
    if (previous_stop_action.sa_handler != SIG_IGN) {
      action.sa_handler = StopWithTerminalRestored;
      ::sigaction(SIGTSTP, &action, nullptr);
    }
    active_ = true;
  }
  ~ScopedTerminalRestore() {
    if (!active_) return;
    for (int i = 0; i < kRestoreSignalCount; ++i) {
      ::sigaction(kRestoreSignals[i], &previous_restore_actions[i], nullptr);
    }
    ::sigaction(SIGTSTP, &previous_stop_action, nullptr);
    ::sigaction(SIGWINCH, &previous_resize_action, nullptr);
    if (terminal_restore.armed.exchange(false)) {
      ::tcsetattr(terminal_restore.fd, TCSANOW, &terminal_restore.settings);
    }
  }

 private:
  bool active_ = false;
};

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

// The length of the UTF-8 sequence a lead byte starts; 0 for a byte that
// cannot start one.
int Utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xe0) == 0xc0) return 2;
  if ((lead & 0xf0) == 0xe0) return 3;
  if ((lead & 0xf8) == 0xf0) return 4;
  return 0;
}

bool WantColor(int out_fd) {
  if (::isatty(out_fd) != 1) return false;
  const char* term = std::getenv("TERM");
  if (term == nullptr || absl::string_view(term) == "dumb") return false;
  return std::getenv("NO_COLOR") == nullptr;
}

// Reads one answer line from `in`; false at the end of input, on an error
// or on Ctrl-C (through `catcher`).
bool ReadAnswer(int in, SigintCatcher* catcher, std::string* line,
                size_t max_size = 256) {
  line->clear();
  for (;;) {
    struct pollfd fds[2] = {{in, POLLIN, 0}, {catcher->fd(), POLLIN, 0}};
    int ready = ::poll(fds, catcher->ok() ? 2 : 1, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (catcher->ok() && (fds[1].revents & POLLIN) != 0) return false;
    char c;
    ssize_t n = ::read(in, &c, 1);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;
    if (c == '\n' || c == '\r') return true;
    if (line->size() < max_size) line->push_back(c);
  }
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
    std::string text =
        absl::StrCat("\n", Style("1"), "Permission needed (",
                     terminal_internal::TerminalSafe(question.tool),
                     "): ", terminal_internal::TerminalSafe(question.summary),
                     Style("0"), "\n");
    if (!question.detail.empty()) {
      absl::StrAppend(&text, terminal_internal::TerminalSafe(question.detail));
      if (question.detail.back() != '\n') text += "\n";
    }
    absl::StrAppend(&text, "  y  yes\n");
    if (question.session_rule) {
      absl::StrAppend(&text, "  a  yes, and don't ask again this session for ",
                      terminal_internal::TerminalSafe(*question.session_rule),
                      "\n");
    }
    absl::StrAppend(&text, "  n  no\n");
    WriteText(text);
    const std::string choices = question.session_rule ? "[y/a/n]" : "[y/n]";
    SigintCatcher catcher(nullptr);
    PermissionAnswer answer = PermissionAnswer::kNo;
    for (int tries = 0; tries < 20; ++tries) {
      WriteText(absl::StrCat("Allow? ", choices, " "));
      std::string line;
      if (!ReadAnswer(in_, &catcher, &line)) {
        WriteText("\n");
        break;
      }
      std::string word =
          absl::AsciiStrToLower(absl::StripAsciiWhitespace(line));
      if (word == "y" || word == "yes") {
        answer = PermissionAnswer::kYes;
        break;
      }
      if (question.session_rule && (word == "a" || word == "always")) {
        answer = PermissionAnswer::kYesForSession;
        break;
      }
      if (word == "n" || word == "no") break;
    }
    WriteText(answer == PermissionAnswer::kNo ? "Not allowed.\n"
                                              : "Allowed.\n");
    return answer;
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
};

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

class TerminalLineSource : public LineSource {
 public:
  TerminalLineSource(int in_fd, int out_fd, const std::string& history_path,
                     CancelFlag* cancel)
      : in_(in_fd), out_(out_fd), cancel_(cancel), catcher_(cancel) {
    EnsureUtf8Ctype();
    in_file_ = DupFile(in_fd, "r");
    out_file_ = DupFile(out_fd, "w");
    history_ = ::history_init();
    HistEvent event;
    ::history(history_, &event, H_SETSIZE, kHistoryKept);
    ::history(history_, &event, H_SETUNIQUE, 1);
    if (!history_path.empty()) LoadHistory(history_path);
    if (in_file_ != nullptr && out_file_ != nullptr) {
      editor_ = ::el_init_fd("garuda-agent", in_file_, out_file_, out_file_,
                             in_fd, out_fd, out_fd);
    }
    if (editor_ != nullptr) {
      ::el_set(editor_, EL_CLIENTDATA, this);
      ::el_set(editor_, EL_EDITOR, "emacs");
      ::el_set(editor_, EL_HIST, history, history_);
      ::el_set(editor_, EL_PROMPT, &TerminalLineSource::Prompt);
      ::el_set(editor_, EL_GETCFN, &TerminalLineSource::GetChar);
      ::el_set(editor_, EL_ADDFN, "garuda-interrupt",
               "Ctrl-C: clear the line, or leave",
               &TerminalLineSource::OnCtrlC);
      ::el_set(editor_, EL_BIND, "^C", "garuda-interrupt", nullptr);
    }
  }

  ~TerminalLineSource() override {
    if (editor_ != nullptr) ::el_end(editor_);
    if (history_ != nullptr) ::history_end(history_);
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
      for (;;) {
        interrupted_ = false;
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
        Remember(text);
        result = std::move(text);
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

  void LoadHistory(const std::string& path) {
    history_fd_ = UniqueFd(
        ::open(path.c_str(),
               O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!history_fd_) {
      Write(absl::StrCat("(history not kept: cannot open ",
                         terminal_internal::TerminalSafe(path), ": ",
                         strerror(errno), ")\n"));
      return;
    }
    // The history is the person's own typing: only they may read it.
    (void)::fchmod(history_fd_.get(), 0600);
    absl::StatusOr<std::string> content = ReadAll(history_fd_.get());
    if (!content.ok()) return;
    std::vector<absl::string_view> lines =
        absl::StrSplit(*content, '\n', absl::SkipEmpty());
    size_t first =
        lines.size() > kHistoryKept ? lines.size() - kHistoryKept : 0;
    HistEvent event;
    for (size_t i = first; i < lines.size(); ++i) {
      ::history(history_, &event, H_ENTER,
                UnescapeHistoryLine(lines[i]).c_str());
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
  }

  void Remember(const std::string& line) {
    if (line.empty() || line[0] == ' ' ||
        absl::StripAsciiWhitespace(line).empty()) {
      return;
    }
    HistEvent event;
    ::history(history_, &event, H_ENTER, line.c_str());
    if (history_fd_) {
      // One write per line with O_APPEND: a crash keeps every earlier line.
      (void)WriteAll(history_fd_.get(),
                     absl::StrCat(EscapeHistoryLine(line), "\n"));
    }
  }

  void Write(absl::string_view text) { (void)WriteAll(out_, text); }

  int in_;
  int out_;
  CancelFlag* cancel_;
  SigintCatcher catcher_;
  FILE* in_file_ = nullptr;
  FILE* out_file_ = nullptr;
  History* history_ = nullptr;
  EditLine* editor_ = nullptr;
  UniqueFd history_fd_;
  std::string prompt_;
  bool interrupted_ = false;
  bool line_had_text_ = false;
  bool armed_ = false;
};

}  // namespace

std::unique_ptr<Interaction> MakeTerminalInteraction(int in_fd, int out_fd) {
  return std::make_unique<TerminalInteraction>(in_fd, out_fd);
}

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

std::string TerminalSafe(absl::string_view text) {
  // MakeLineVisible doubles a backslash (so its marks cannot be forged in a
  // diff); here text that is already visible must pass unchanged, so the
  // backslashes and newlines are kept between the pieces it marks.
  std::string out;
  out.reserve(text.size());
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != '\\' && text[i] != '\n') continue;
    out += MakeLineVisible(text.substr(start, i - start));
    if (i < text.size()) out += text[i];
    start = i + 1;
  }
  return out;
}

}  // namespace terminal_internal

}  // namespace agent
}  // namespace garuda
