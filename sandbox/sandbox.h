// Runs a command in an OS sandbox of our own, from a SandboxPolicy.
//
// The child is made with new user, mount, PID, IPC, UTS and (unless the
// policy turns network on) network namespaces. Its first process (PID 1 of
// the new namespace) builds the new root (sandbox/mount_plan.h), then starts
// the command and reaps; the command drops every capability, sets
// no_new_privs, its rlimits, Landlock for writes and the seccomp filter,
// then execs. With a memory or process limit, the supervisor first moves
// PID 1 into a cgroup of the command's own (sandbox/cgroup.h), so that the
// command and everything it starts is limited; where no cgroup can be made
// the limits are rlimits, and the result's limits_note says so. When the
// command ends, PID 1 ends, and the kernel ends every process left in the
// namespace (unless the policy keeps them until they end). The caller (the
// supervisor) enforces the wall time.
//
// Nothing here needs root (the cgroups need a writable cgroup tree, and are
// skipped without one): the user namespace maps the caller's own uid and
// gid to themselves, and every mount happens in namespaces the child owns.
#ifndef GARUDA_SANDBOX_SANDBOX_H_
#define GARUDA_SANDBOX_SANDBOX_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/sandbox_policy.pb.h"
#include "sandbox/run_result.h"

namespace garuda {

class PrivateWalk;
class StoredWalk;

struct RunOptions {
  std::vector<std::string> argv;  // argv[0] is looked up in the policy's PATH
  // Capture stdout and stderr (at most capture_limit bytes each, the rest is
  // read and dropped) and give the command /dev/null as stdin. Otherwise the
  // command shares the caller's standard descriptors.
  bool capture_output = false;
  size_t capture_limit = 1 << 20;
  // RunOnHost only: the wall-time limit (0: none). RunInSandbox takes the
  // policy's.
  uint64_t wall_time_ms = 0;
  // Runs in the command's place, after every confinement step, instead of
  // execve; its return value is the exit code. For the probe's canaries.
  std::function<int()> entry;
  // The memory and process limits in a cgroup of the command's own where
  // one can be made (sandbox/cgroup.h). Off: rlimits only (for tests that
  // show what the rlimits alone do).
  bool use_cgroups = true;
  // For a caller that exits right after the run (garuda-stager run):
  // return as soon as PID 1 reports the command's end, by which time PID 1
  // has killed and reaped every other process of the sandbox, without
  // waiting for the kernel's teardown of the namespaces. PID 1 stays a
  // child of the caller, unreaped, until the caller exits. With cgroups,
  // the run waits for PID 1 as usual (they can be removed only once it has
  // left).
  bool return_before_teardown = false;
  // A stop signal (SIGTERM, SIGHUP; see RunInSandbox) that ended the run
  // is raised again only when the caller calls RaiseDeferredStopSignal(),
  // after its own cleanup (a one-shot staging view to remove), instead of
  // as the run returns.
  bool defer_stop_signal = false;
  // A policy with network_proxy: the sandbox's end of the hand-off socket
  // to the session's proxy (lib/netproxy/session_proxy.h), on which PID 1
  // sends the listening socket it made. Required then; -1 otherwise.
  int proxy_handoff_fd = -1;
  // A request to stop the run from the caller's side (a person's Ctrl-C
  // relayed by garuda-stager): once this descriptor is readable or hung up
  // (a byte came, or its writer is gone), the command and everything it
  // started end at once, as for a stop signal, and the result is kStopped.
  // It is polled, never read. -1: none.
  int cancel_fd = -1;
  // With capture_output: each piece of the output as it is read (stream 1
  // stdout, 2 stderr), before the cap applies, on the calling thread. For a
  // live view; the result still carries the capped output.
  std::function<void(int stream, absl::string_view data)> on_output;
  // RunInSandbox only: the command's process starts only once
  // CLOCK_REALTIME_COARSE has passed this time (ns since the epoch; 0: at
  // once). PID 1 waits for it after the sandbox's setup, so that a staged
  // command's start line (lib/staging/change_clock.h) costs no wait of its
  // own on top of that setup.
  int64_t start_after_coarse_ns = 0;
  // RunInSandbox only: the walk of the policy's denyPrivateUnder kept
  // between runs (sandbox/private_walk.h), for a process that starts many
  // (garuda-stager serve); null: stored_walk's answer.
  PrivateWalk* private_walk = nullptr;
  // RunInSandbox only, without private_walk: the walk kept on disk between
  // processes (sandbox/stored_walk.h); null: StoredWalk::ForThisMachine().
  const StoredWalk* stored_walk = nullptr;
  // RunOnHost only: called about every tick_ms while the command runs, on
  // the calling thread (a caller that captures into files of its own reads
  // them from here for a live view). 0: never.
  uint64_t tick_ms = 0;
  std::function<void()> on_tick;
};

// Raises the stop signal of a run made with defer_stop_signal, if one came;
// by default the program ends of it here. Nothing when none came.
void RaiseDeferredStopSignal();

// A run whose command did not start is a RunResult of kind kFailedToStart
// with the reason; an error status means the policy or options are wrong.
// Project-relative denied paths missing from a writable project are first
// created as empty folders, so that the command cannot create them.
//
// The command runs in a session of its own, without a controlling terminal
// (sandbox/pid1.h). While it runs, the calling thread holds SIGTERM,
// SIGHUP, SIGINT and SIGQUIT back (sandbox/supervisor.h): SIGTERM or SIGHUP
// ends the command and everything it started at once, and is then raised
// again in the caller, after the run's cleanup; so are SIGINT and SIGQUIT
// when the output is captured. When the output is passed through (the
// command shares the terminal), SIGINT and SIGQUIT go on to the command's
// process group instead, as a terminal's Ctrl-C would, and the command's
// end is reported, as system(3) does.
absl::StatusOr<RunResult> RunInSandbox(const SandboxPolicy& policy,
                                       const RunOptions& options);

// Runs argv on the host, unconfined, in `directory`, with the caller's
// environment: for the explicit --allow-host fallback and the benchmark.
absl::StatusOr<RunResult> RunOnHost(const RunOptions& options,
                                    const std::string& directory);

}  // namespace garuda

#endif  // GARUDA_SANDBOX_SANDBOX_H_
