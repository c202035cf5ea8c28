// A cgroup of the command's own for its memory and process limits.
//
// Only a memory cgroup tells "out of memory" apart from any other end (the
// kernel counts its OOM kills), and only the pids controller bounds the
// processes of root (RLIMIT_NPROC does not). The supervisor makes one cgroup
// per limited controller below its own cgroup -- cgroup v1's memory and pids
// hierarchies, or a cgroup v2 subtree with the controller enabled for its
// children -- moves the sandbox's first process into it before the command
// starts, and removes it after the run. Where none can be made, the limit
// stays an rlimit and Note() says why.
#ifndef GARUDA_SANDBOX_CGROUP_H_
#define GARUDA_SANDBOX_CGROUP_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"

namespace garuda {

enum class CgroupController { kMemory, kPids };

// "memory" or "pids".
const char* CgroupControllerName(CgroupController controller);

// Where this process can make a command's cgroup for one controller.
struct CgroupPlace {
  bool available = false;
  int version = 0;     // 1 or 2
  std::string parent;  // this process's own cgroup folder for the controller
  std::string reason;  // not available: why
  std::string fix;     // not available: what a person can do
};

// Reads /proc/self/cgroup and /proc/self/mountinfo. Available means a
// hierarchy with the controller is mounted read-write and (cgroup v2) the
// controller is, or can be, enabled for the children of our cgroup; whether
// a cgroup can really be made shows in CommandCgroups::Create.
CgroupPlace FindCgroupPlace(CgroupController controller);

// The same from the texts of /proc/self/mountinfo and /proc/self/cgroup
// (the folders they name are still looked at): for tests.
CgroupPlace FindCgroupPlaceIn(CgroupController controller,
                              const std::string& mountinfo,
                              const std::string& proc_cgroup);

// Removes the empty cgroups that supervisors which died before their
// cleanup left in `parent` ("garuda-<pid>-<n>" of a pid that is gone). One
// that still holds a process stays (rmdir fails with EBUSY), and so do
// those of live pids. CommandCgroups::Create calls it once per process.
void RemoveLeftoverCgroups(const std::string& parent);

// The cgroups of one command, removed on destruction (by then the command's
// processes are gone: the sandbox's PID namespace ended with its first
// process).
class CommandCgroups {
 public:
  // Makes a cgroup for each non-zero limit, when `allowed` and a place
  // exists: memory.limit_in_bytes (v1) or memory.max (v2), swap off;
  // pids.max = processes + 1 (the sandbox's PID 1 is not the command's).
  // A limit without its cgroup is noted, for the rlimit fallback.
  static CommandCgroups Create(uint64_t memory_bytes, uint64_t processes,
                               bool allowed);

  CommandCgroups() = default;
  CommandCgroups(CommandCgroups&& other) noexcept;
  CommandCgroups& operator=(CommandCgroups&& other) noexcept;
  CommandCgroups(const CommandCgroups&) = delete;
  CommandCgroups& operator=(const CommandCgroups&) = delete;
  ~CommandCgroups();

  // Moves `pid` into every cgroup made (its children follow it). A cgroup
  // that will not take it is removed and its limit noted for the fallback.
  // On cgroup v1 the write to cgroup.procs waits out an RCU grace period
  // (the cgroup core's global lock for moving whole processes): 5 to 20 ms
  // here, which EnterThread avoids.
  void AddProcess(pid_t pid);

  // Moves the calling thread (only it) into every cgroup made, so that a
  // process it starts before LeaveThread is born inside: no process of the
  // command ever runs outside, and no move of a whole process is needed.
  // cgroup v1 only: "0" written to the cgroup's `tasks` file moves the
  // writing thread without the global lock (tens of microseconds). Returns
  // false, having moved nothing, where that cannot be done (a cgroup v2,
  // a parent whose `tasks` file we could not write to come back, a write
  // refused): the caller then uses AddProcess. An error means the thread
  // could not be moved back: it is still inside, and the run must not go on.
  absl::StatusOr<bool> EnterThread();
  // Moves the calling thread back to the cgroups it came from. An error:
  // it is still inside one of them (the run must not go on).
  absl::Status LeaveThread();
  // After EnterThread returned true: the way back of each cgroup (the tasks
  // file of the cgroup the calling thread came from, open for writing),
  // for PID 1, born inside, to write "0" to and leave once the command's
  // processes are reaped. Then the cgroups are empty as soon as the command
  // has ended, and can be removed without waiting for PID 1's exit (its
  // namespaces' teardown). The descriptors stay this object's.
  std::vector<int> WaysBack() const;

  bool empty() const { return !memory_ && !pids_; }
  bool memory() const { return memory_.has_value(); }  // enforced by cgroup
  bool pids() const { return pids_.has_value(); }
  // The memory cgroup's OOM kills so far (memory.oom_control or
  // memory.events); 0 without a memory cgroup.
  uint64_t OomKills() const;
  // Forks the pids cgroup refused so far (pids.events "max").
  uint64_t ForkRefusals() const;
  // What enforces each limit that has no cgroup, and why; empty when every
  // limit has its cgroup (or none was set).
  std::string Note() const;
  // The folders made (for the probe's detail and the tests).
  std::vector<std::string> Paths() const;

 private:
  struct Group {
    std::string path;
    int version = 0;
    std::string parent;  // where the calling thread returns (LeaveThread)
    // `parent`'s tasks file, opened by EnterThread before the thread goes in
    // (the way back must be open first); LeaveThread writes "0" to it.
    UniqueFd way_back;
    bool entered = false;  // the calling thread is inside (EnterThread)
  };
  void Remove(std::optional<Group>& group);

  std::optional<Group> memory_;
  std::optional<Group> pids_;
  std::vector<std::string> notes_;
};

}  // namespace garuda

#endif  // GARUDA_SANDBOX_CGROUP_H_
