// Work shared by forked worker processes (not threads: the stager unshares
// its user namespace later, which a process that ever had threads may race
// with). The caller maps the shared state first (SharedMemory), then runs
// the same work function in several processes that take items from it.
#ifndef GARUDA_LIB_STAGING_WORKERS_H_
#define GARUDA_LIB_STAGING_WORKERS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"

namespace garuda {

static_assert(std::atomic<uint32_t>::is_always_lock_free,
              "atomics shared between processes must be lock-free");

// Zeroed memory shared with the processes forked after it was made.
class SharedMemory {
 public:
  explicit SharedMemory(size_t bytes);
  ~SharedMemory();
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  bool ok() const { return data_ != nullptr; }
  void* data() { return data_; }

 private:
  size_t size_;
  void* data_ = nullptr;
};

// Runs `work` in `processes` processes: this one and processes - 1 forked
// children (fewer if a fork fails), which never outlive it (they get
// SIGKILL when it dies). Waits for all of them; the first error wins. On an
// error `stop` (in shared memory; may be null) is set, so that the others can
// end early. `enter_worker` (may be empty) runs first in each forked child
// only, and its error is that child's: where a worker confines itself.
absl::Status RunInProcesses(
    size_t processes, const std::function<absl::Status()>& work,
    std::atomic<uint32_t>* stop,
    const std::function<absl::Status()>& enter_worker = {});

// For `enter_worker`: from here on this process writes only beneath `path`
// (Landlock, with no_new_privs, which it needs). Where the kernel has no
// Landlock it changes nothing (the sandbox itself refuses to run there).
// Safe: both only take rights away, and only from the calling process.
absl::Status ConfineWritesBeneath(const std::string& path);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_WORKERS_H_
