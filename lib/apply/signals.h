// SIGTERM, SIGINT, SIGHUP and SIGQUIT (Ctrl-\) held back while the project
// is half-changed: they are blocked (so they wait as pending signals) from
// the first write until the apply is whole or put back, and delivered when
// the mask is restored. The apply asks Pending() between its steps, so a signal ends it
// early by putting everything back, never by leaving it half done.
#ifndef GARUDA_LIB_APPLY_SIGNALS_H_
#define GARUDA_LIB_APPLY_SIGNALS_H_

#include <signal.h>

namespace garuda {

class DeferredTerminationSignals {
 public:
  DeferredTerminationSignals() {
    sigset_t set = Set();
    pthread_sigmask(SIG_BLOCK, &set, &old_);
  }
  // Restores the mask: a signal that came meanwhile is delivered now.
  ~DeferredTerminationSignals() {
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  DeferredTerminationSignals(const DeferredTerminationSignals&) = delete;
  DeferredTerminationSignals& operator=(const DeferredTerminationSignals&) =
      delete;

  // The first of them waiting to be delivered, or 0.
  static int Pending() {
    sigset_t pending;
    if (sigpending(&pending) != 0) return 0;
    for (int signal : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) {
      if (sigismember(&pending, signal) == 1) return signal;
    }
    return 0;
  }

 private:
  static sigset_t Set() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGQUIT);
    return set;
  }
  sigset_t old_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_SIGNALS_H_
