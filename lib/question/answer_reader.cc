#include "lib/question/answer_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>

#include "absl/strings/ascii.h"
#include "lib/base/files.h"
#include "lib/question/keys.h"

namespace garuda {
namespace question_internal {
namespace {

volatile sig_atomic_t interrupted_flag = 0;
int interrupt_pipe[2] = {-1, -1};

void OnInterrupt(int) {
  int saved_errno = errno;
  interrupted_flag = 1;
  if (interrupt_pipe[1] >= 0) (void)!::write(interrupt_pipe[1], "x", 1);
  errno = saved_errno;
}

// The terminal's settings before raw mode, for the signal handlers below.
constexpr int kRestoreSignals[] = {SIGTERM, SIGHUP, SIGQUIT};
volatile sig_atomic_t raw_fd = -1;
struct termios cooked = {};
struct sigaction previous_actions[3] = {};

// A signal that ends the process while the terminal is raw: the settings
// go back first (tcsetattr is async-signal-safe), then the process's own
// handling of the signal (its handler, or the default) takes it.
void OnEndingSignal(int signal_number) {
  int saved_errno = errno;
  if (raw_fd >= 0) ::tcsetattr(raw_fd, TCSANOW, &cooked);
  raw_fd = -1;
  for (size_t i = 0; i < 3; ++i) {
    if (kRestoreSignals[i] == signal_number) {
      ::sigaction(signal_number, &previous_actions[i], nullptr);
    }
  }
  // Pending until this handler returns, then handled as before.
  ::raise(signal_number);
  errno = saved_errno;
}

bool Answerless(char c) { return c == '\n' || c == '\r' || c == ' '; }

// Ctrl-D (the end of input in line mode) and Ctrl-C as a byte (ISIG
// cleared by someone else) end the question as they would in line mode.
bool Ends(char c) { return c == '\x04' || c == '\x03'; }

}  // namespace

AnswerReader::AnswerReader(int in) : in_(in) {
  sigemptyset(&previous_mask_);
  if (::pipe2(interrupt_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    interrupt_pipe[0] = interrupt_pipe[1] = -1;
    return;
  }
  interrupted_flag = 0;
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, &previous_);
  // A parent may have started us with SIGINT blocked; Ctrl-C must still
  // reach the question.
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, SIGINT);
  ::pthread_sigmask(SIG_UNBLOCK, &unblock, &previous_mask_);
  ok_ = true;

  struct termios settings;
  if (::isatty(in_) == 1 && ::tcgetattr(in_, &settings) == 0) {
    cooked = settings;
    // Safe: only this terminal's line settings change, and they are put
    // back by the destructor or, on a signal that ends the process, by
    // OnEndingSignal before anything else.
    struct sigaction restore = {};
    restore.sa_handler = OnEndingSignal;
    sigemptyset(&restore.sa_mask);
    for (size_t i = 0; i < 3; ++i) {
      ::sigaction(kRestoreSignals[i], &restore, &previous_actions[i]);
    }
    raw_fd = in_;
    settings.c_lflag &= ~(ICANON | ECHO | ECHONL | IEXTEN);
    settings.c_lflag |= ISIG;  // Ctrl-C stays a signal: the answer "no"
    settings.c_cc[VMIN] = 1;
    settings.c_cc[VTIME] = 0;
    // Ctrl-Z would stop the question with the terminal raw, Ctrl-\ would
    // dump core; here both are only keys, and no answer.
    settings.c_cc[VSUSP] = _POSIX_VDISABLE;
    settings.c_cc[VQUIT] = _POSIX_VDISABLE;
    if (::tcsetattr(in_, TCSANOW, &settings) == 0) {
      raw_ = true;
    } else {
      raw_fd = -1;
      for (size_t i = 0; i < 3; ++i) {
        ::sigaction(kRestoreSignals[i], &previous_actions[i], nullptr);
      }
    }
  }
}

AnswerReader::~AnswerReader() {
  if (raw_) {
    raw_fd = -1;
    ::tcsetattr(in_, TCSADRAIN, &cooked);
    for (size_t i = 0; i < 3; ++i) {
      ::sigaction(kRestoreSignals[i], &previous_actions[i], nullptr);
    }
  }
  if (!ok_) return;
  ::pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
  ::sigaction(SIGINT, &previous_, nullptr);
  for (int& fd : interrupt_pipe) {
    ::close(fd);
    fd = -1;
  }
}

bool AnswerReader::interrupted() const { return interrupted_flag != 0; }

void AnswerReader::DropTypeAhead() {
  if (raw_) ::tcflush(in_, TCIFLUSH);
}

bool AnswerReader::ReadByte(char* c, int timeout_ms) {
  if (!ok_) return false;
  for (;;) {
    struct pollfd fds[2] = {{in_, POLLIN, 0}, {interrupt_pipe[0], POLLIN, 0}};
    int ready = ::poll(fds, 2, timeout_ms);
    if (interrupted_flag) return false;
    if (ready < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (ready == 0) return false;  // the timeout passed
    ssize_t n = ::read(in_, c, 1);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    return n == 1;
  }
}

bool AnswerReader::ReadPipeLine(std::string* line) {
  line->clear();
  char c;
  while (ReadByte(&c)) {
    if (c == '\n' || c == '\r') return true;
    if (line->size() < 256) line->push_back(c);
  }
  // A last line without its newline is not an answer: the writer may have
  // been cut off in the middle of it.
  return false;
}

std::optional<char> AnswerReader::ReadAnswer(absl::Span<const char> offered) {
  if (!raw_) {
    std::string line;
    if (!ReadPipeLine(&line)) return std::nullopt;
    return KeyOfWord(line, offered);
  }
  char c;
  do {
    if (!ReadByte(&c)) return std::nullopt;
  } while (Answerless(c));
  if (Ends(c)) return std::nullopt;
  // An Enter typed right after the key out of habit goes with it.
  char after;
  while (ReadByte(&after, 0)) {
    if (!Answerless(after)) break;
  }
  c = absl::ascii_tolower(static_cast<unsigned char>(c));
  for (char key : offered) {
    if (key == c) return c;
  }
  return static_cast<char>(0);
}

std::optional<int> AnswerReader::ReadKey() {
  if (!raw_) {
    std::string line;
    if (!ReadPipeLine(&line)) return std::nullopt;
    if (line.empty()) return '\n';
    rest_ = line.substr(1);
    return static_cast<unsigned char>(line[0]);
  }
  char c;
  if (!ReadByte(&c) || Ends(c)) return std::nullopt;
  if (c != '\x1b') return static_cast<unsigned char>(c);
  // An escape sequence arrives at once; a lone Escape has nothing after it.
  char next;
  if (!ReadByte(&next, 50)) return 0x1b;
  if (next != '[' && next != 'O') return 0x1b;
  std::string sequence;
  while (ReadByte(&next, 50)) {
    sequence.push_back(next);
    if (std::isalpha(static_cast<unsigned char>(next)) || next == '~' ||
        sequence.size() > 6) {
      break;
    }
  }
  if (sequence == "A") return kKeyUp;
  if (sequence == "B") return kKeyDown;
  if (sequence == "5~") return kKeyPageUp;
  if (sequence == "6~") return kKeyPageDown;
  if (sequence == "H" || sequence == "1~") return kKeyHome;
  if (sequence == "F" || sequence == "4~") return kKeyEnd;
  return 0;  // a key of no meaning here
}

std::optional<std::string> AnswerReader::ReadText(int out) {
  if (!raw_) {
    std::string text = rest_;
    rest_.clear();
    return text;
  }
  std::string text;
  char c;
  for (;;) {
    if (!ReadByte(&c) || Ends(c)) return std::nullopt;
    if (c == '\r' || c == '\n') return text;
    if (c == '\x1b') return std::nullopt;
    if (c == '\x7f' || c == '\b') {
      if (!text.empty()) {
        // Whole UTF-8 characters go.
        while (!text.empty() && (text.back() & 0xc0) == 0x80) text.pop_back();
        if (!text.empty()) text.pop_back();
        (void)WriteAll(out, "\b \b");
      }
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x20 || text.size() >= 200) continue;
    text.push_back(c);
    (void)WriteAll(out, std::string(1, c));
  }
}

}  // namespace question_internal
}  // namespace garuda
