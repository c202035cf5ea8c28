#include "lib/terminal/terminal_signals.h"

#include <poll.h>
#include <termios.h>

namespace garuda {
namespace terminal {
namespace terminal_internal {

std::atomic<SigintCatcher*> active_catcher{nullptr};

namespace {

// While libedit has the terminal in its own mode, a signal that ends the
// process (SIGTERM, SIGHUP, SIGQUIT, and a crash: SIGABRT, SIGSEGV, SIGBUS,
// SIGILL, SIGFPE) first puts the saved settings back, then does what it did
// before: its previous disposition is put back and the signal raised again,
// to be taken once this handler returns (a fault simply happens again).
struct TerminalRestore {
  std::atomic<bool> armed{false};
  int fd = -1;
  struct termios settings;
  // Where bracketed paste was turned on (the editor's output), or -1.
  std::atomic<int> paste_fd{-1};
};
TerminalRestore terminal_restore;
constexpr char kPasteOff[] = "\x1b[?2004l";

// Async-signal-safe: the terminal stops marking pastes for the shell.
void PasteOff() {
  int fd = terminal_restore.paste_fd.load();
  if (fd >= 0) (void)!::write(fd, kPasteOff, sizeof kPasteOff - 1);
}
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
    PasteOff();
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
    PasteOff();
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

}  // namespace

ScopedTerminalRestore::ScopedTerminalRestore(int fd) {
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

ScopedTerminalRestore::~ScopedTerminalRestore() {
  if (!active_) return;
  for (int i = 0; i < kRestoreSignalCount; ++i) {
    ::sigaction(kRestoreSignals[i], &previous_restore_actions[i], nullptr);
  }
  ::sigaction(SIGTSTP, &previous_stop_action, nullptr);
  ::sigaction(SIGWINCH, &previous_resize_action, nullptr);
  if (terminal_restore.armed.exchange(false)) {
    ::tcsetattr(terminal_restore.fd, TCSANOW, &terminal_restore.settings);
  }
  PasteOff();
  terminal_restore.paste_fd.store(-1);
}

void ScopedTerminalRestore::MarkPastes(int out_fd) {
  static constexpr char kPasteOn[] = "\x1b[?2004h";
  if (!active_) return;
  (void)!::write(out_fd, kPasteOn, sizeof kPasteOn - 1);
  terminal_restore.paste_fd.store(out_fd);
}

// Reads one answer line from `in`; false at the end of input, on an error
// or on Ctrl-C (through `catcher`).
bool ReadAnswer(int in, SigintCatcher* catcher, std::string* line,
                size_t max_size) {
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

}  // namespace terminal_internal
}  // namespace terminal
}  // namespace garuda
