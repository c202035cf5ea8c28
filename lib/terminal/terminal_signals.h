// The terminal's signals while garuda-agent has it, shared by the terminal's
// Interaction and LineSource (terminal.h): Ctrl-C through a pipe
// (SigintCatcher), and the terminal's settings put back when a signal ends
// or stops the process in the middle of a line (ScopedTerminalRestore).
// Internal to lib/agent's terminal.
#ifndef GARUDA_LIB_TERMINAL_TERMINAL_SIGNALS_H_
#define GARUDA_LIB_TERMINAL_TERMINAL_SIGNALS_H_

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "lib/base/cancel_flag.h"

namespace garuda {
namespace terminal {
namespace terminal_internal {

// ---------------------------------------------------------------------------
// SIGINT: a handler that writes to a pipe (so a signal that lands just
// before a poll is not lost) and, while the session is busy with a request,
// sets the CancelFlag. Catchers nest: a question inside a session installs
// its own and puts the previous one back. The same pipe carries the news of
// a continue after Ctrl-Z and of a resized window to the line editor.

class SigintCatcher;
extern std::atomic<SigintCatcher*> active_catcher;
inline constexpr char kResumedByte = 'z';
inline constexpr char kResizedByte = 'w';

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

// While it lives (around a line being edited), a signal that ends the
// process puts the terminal's settings back first, Ctrl-Z stops with them
// put back, and a resized window is passed on to the editor.
class ScopedTerminalRestore {
 public:
  explicit ScopedTerminalRestore(int fd);
  ~ScopedTerminalRestore();
  // Asks the terminal on `out_fd` to mark pastes (bracketed paste: ESC [200~
  // ... ESC [201~) until the scope ends, a signal ends or stops the process
  // (then it is turned off first, so the shell does not get the marks), or
  // MarkPastes is called again after a continue.
  void MarkPastes(int out_fd);
  ScopedTerminalRestore(const ScopedTerminalRestore&) = delete;
  ScopedTerminalRestore& operator=(const ScopedTerminalRestore&) = delete;

 private:
  bool active_ = false;
};

// Reads one answer line from `in`; false at the end of input, on an error
// or on Ctrl-C (through `catcher`).
bool ReadAnswer(int in, SigintCatcher* catcher, std::string* line,
                size_t max_size = 256);

}  // namespace terminal_internal
}  // namespace terminal
}  // namespace garuda

#endif  // GARUDA_LIB_TERMINAL_TERMINAL_SIGNALS_H_
