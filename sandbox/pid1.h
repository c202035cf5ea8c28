// The sandbox's side of a run: its first process (PID 1 of the new PID
// namespace) and the start of the command under it. The supervisor's side
// is sandbox/supervisor.h; sandbox/sandbox.h puts the two together.
//
// PID 1 writes the identity maps, builds the new root (sandbox/mount_plan.h),
// starts the command in a session of its own, forwards the interrupts it is
// sent to the command's process group, reaps every process, ends whatever
// is left, and writes the command's wait status on its status pipe.
#ifndef GARUDA_SANDBOX_PID1_H_
#define GARUDA_SANDBOX_PID1_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "proto/sandbox_policy.pb.h"
#include "sandbox/confine.h"
#include "sandbox/mount_plan.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace sandbox_internal {

// A child's exit code when the sandbox or the command could not be started;
// the reason is on the error pipe.
constexpr int kSetupFailed = 127;

// In a child: reports `status` on the error pipe and exits. The first byte
// says whose fault it is: 'S' the sandbox's setup, 'C' the command (exec).
// The supervisor reads it as the reason the run did not start.
[[noreturn]] void Fail(int error_fd, const absl::Status& status,
                       char kind = 'S');

// NULL-terminated pointers into `strings`, for execvp.
std::vector<char*> CStrings(const std::vector<std::string>& strings);

struct ChildIo {
  int error_fd = -1;
  int stdout_fd = -1;  // -1: inherit
  int stderr_fd = -1;
  bool null_stdin = false;
  // With cgroups: PID 1 waits for one byte on it before anything else (the
  // supervisor moves it into the cgroups first). The byte's bits say which
  // limits the cgroups took over: kMemoryByCgroup, kPidsByCgroup.
  int go_fd = -1;
  // With a network_proxy policy: where PID 1 sends its loopback listener
  // (sandbox/network_proxy.h).
  int proxy_fd = -1;
  // With cgroups PID 1 was born in (CommandCgroups::WaysBack): it writes
  // "0" to each once every process of the command has been reaped, before
  // it reports, so that the cgroups are empty when the report arrives.
  std::vector<int> leave_cgroup_fds;
};

constexpr char kMemoryByCgroup = 1;
constexpr char kPidsByCgroup = 2;

// PID 1 of the sandbox, in the child of clone(CLONE_NEWUSER | ...): builds
// the root, starts the command, reaps, and writes the command's wait status
// on `status_fd` (-1 when it found none) just before it exits.
[[noreturn]] void SandboxInit(const SandboxPolicy& policy,
                              const MountPlan& plan, Confinement& confinement,
                              const RunOptions& options, uid_t uid, gid_t gid,
                              const ChildIo& io, int status_fd);

}  // namespace sandbox_internal
}  // namespace garuda

#endif  // GARUDA_SANDBOX_PID1_H_
