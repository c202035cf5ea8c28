// The person's terminal, taken for one question by a helper (garuda-applier,
// garuda-stager) and given back after.
//
// The helpers run in process groups of their own (so that Ctrl-C at the
// prompt is the agent's), which makes them background jobs of the
// terminal: a read from it would stop them (SIGTTIN). For its question a
// helper makes its own group the terminal's foreground group, puts the
// terminal in line mode with echo, and when the question is answered puts
// the previous foreground group and settings back. While it holds the
// terminal, Ctrl-C reaches the helper (its question answers no), a read by
// the agent stops the agent, and the person's typing goes to the helper
// only.
#ifndef GARUDA_LIB_CONSENT_TERMINAL_TURN_H_
#define GARUDA_LIB_CONSENT_TERMINAL_TURN_H_

#include <signal.h>
#include <sys/types.h>
#include <termios.h>

namespace garuda {

class TerminalTurn {
 public:
  // `fd` is the terminal (not owned). A terminal that is not this
  // process's controlling terminal (a test's pseudo-terminal opened by
  // path) keeps its foreground group; its settings are still set.
  explicit TerminalTurn(int fd);
  ~TerminalTurn();
  TerminalTurn(const TerminalTurn&) = delete;
  TerminalTurn& operator=(const TerminalTurn&) = delete;

  // This process's group held the foreground during the turn.
  bool took_foreground() const { return previous_group_ > 0; }

 private:
  int fd_;
  pid_t previous_group_ = -1;
  bool have_settings_ = false;
  struct termios settings_ = {};
  struct sigaction previous_ttou_ = {};
};

// Gives the terminal `fd` back to this process's group when another group
// holds it (a helper that died during its question). SIGTTOU is blocked
// for the call: a background group may take the foreground only so. OK
// when it already held it, or when `fd` is not the controlling terminal.
void ReclaimTerminal(int fd);

// The agent's side of a helper's question: the terminal's settings when it
// is handed over, put back when it is taken back if they differ. A helper
// puts back its raw mode itself on every return and on the signals it can
// catch; one killed by SIGKILL in the middle of its question cannot.
class TerminalHandover {
 public:
  void Save(int fd);
  // After ReclaimTerminal (in the foreground again, so no SIGTTOU).
  void Restore(int fd);

 private:
  bool saved_ = false;
  struct termios settings_ = {};
};

}  // namespace garuda

#endif  // GARUDA_LIB_CONSENT_TERMINAL_TURN_H_
