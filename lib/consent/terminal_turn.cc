#include "lib/consent/terminal_turn.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>

namespace garuda {
namespace {

// tcsetpgrp from a background group sends SIGTTOU unless it is ignored or
// blocked; ignored, the call goes through (POSIX, tcsetpgrp).
bool SetForeground(int fd, pid_t group) {
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, SIGTTOU);
  ::pthread_sigmask(SIG_BLOCK, &block, &previous);
  bool ok = ::tcsetpgrp(fd, group) == 0;
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return ok;
}

}  // namespace

TerminalTurn::TerminalTurn(int fd) : fd_(fd) {
  // Safe: only the terminal's foreground group and line settings change,
  // and both are put back by the destructor; the kernel allows it only for
  // the session's own controlling terminal.
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGTTOU, &ignore, &previous_ttou_);
  pid_t foreground = ::tcgetpgrp(fd_);
  pid_t own = ::getpgrp();
  if (foreground > 0 && foreground != own && SetForeground(fd_, own)) {
    previous_group_ = foreground;
  }
  if (::tcgetattr(fd_, &settings_) == 0) {
    have_settings_ = true;
    struct termios line = settings_;
    line.c_lflag |= ICANON | ECHO | ECHOE | ISIG;
    line.c_iflag |= ICRNL;
    line.c_oflag |= OPOST | ONLCR;
    ::tcsetattr(fd_, TCSADRAIN, &line);
  }
}

TerminalTurn::~TerminalTurn() {
  if (have_settings_) ::tcsetattr(fd_, TCSADRAIN, &settings_);
  if (previous_group_ > 0) SetForeground(fd_, previous_group_);
  ::sigaction(SIGTTOU, &previous_ttou_, nullptr);
}

void TerminalHandover::Save(int fd) {
  saved_ = ::tcgetattr(fd, &settings_) == 0;
}

void TerminalHandover::Restore(int fd) {
  if (!saved_) return;
  saved_ = false;
  struct termios now;
  if (::tcgetattr(fd, &now) != 0) return;
  if (now.c_lflag == settings_.c_lflag && now.c_iflag == settings_.c_iflag &&
      now.c_oflag == settings_.c_oflag &&
      std::equal(std::begin(now.c_cc), std::end(now.c_cc),
                 std::begin(settings_.c_cc))) {
    return;
  }
  // Safe: the settings this process had a moment ago, on its own terminal.
  ::tcsetattr(fd, TCSADRAIN, &settings_);
}

void ReclaimTerminal(int fd) {
  pid_t foreground = ::tcgetpgrp(fd);
  if (foreground <= 0 || foreground == ::getpgrp()) return;
  SetForeground(fd, ::getpgrp());
}

}  // namespace garuda
