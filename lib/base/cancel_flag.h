// A request to stop what is in flight (a model request, a backoff wait, a
// turn), set by Ctrl-C or by another thread and polled by the work.
#ifndef GARUDA_LIB_BASE_CANCEL_FLAG_H_
#define GARUDA_LIB_BASE_CANCEL_FLAG_H_

#include <atomic>

namespace garuda {

// Set from any thread, or from a signal handler (a lock-free atomic store).
// What polls it says how soon it stops: lib/provider's transfer at its next
// callback (at once when bytes are arriving, within about a second when the
// server is silent), a backoff wait at once.
class CancelFlag {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  void Reset() { cancelled_.store(false, std::memory_order_relaxed); }
  bool cancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  static_assert(std::atomic<bool>::is_always_lock_free,
                "CancelFlag::Cancel must be safe in a signal handler");
  std::atomic<bool> cancelled_{false};
};

}  // namespace garuda

#endif  // GARUDA_LIB_BASE_CANCEL_FLAG_H_
