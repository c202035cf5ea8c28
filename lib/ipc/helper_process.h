// The client side: a helper program started on a socketpair, watched through
// a pidfd so that its death is noticed at once and reported with its exit
// status, never waited on forever.
#ifndef GARUDA_LIB_IPC_HELPER_PROCESS_H_
#define GARUDA_LIB_IPC_HELPER_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "google/protobuf/message_lite.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/channel.h"

namespace garuda {
namespace ipc {

struct HelperOptions {
  std::vector<std::string> argv;  // argv[0] is the program path
  ChannelOptions channel;  // peer_name "peer" becomes the basename of argv[0]
  // The child's end of the socketpair appears as this fd; pass
  // --channel-fd=3 in argv.
  int child_channel_fd = 3;
  // More descriptors the child keeps (at the same numbers). Every other
  // descriptor but 0, 1 and 2 is closed in the child.
  std::vector<int> inherit_fds;
  // The child leads a process group of its own (setpgid), so that a Ctrl-C
  // the terminal sends to the parent's foreground group does not reach it.
  bool new_process_group = false;
};

class PendingHelper;

class HelperProcess {
 public:
  // fork + exec of options.argv with the channel on child_channel_fd. An
  // exec failure (no such program...) is reported here, not as a death.
  static absl::StatusOr<std::unique_ptr<HelperProcess>> Spawn(
      const HelperOptions& options);
  // SIGKILL if still running, then reaps (never leaves a zombie), and only
  // then closes the channel: a killed helper never sees its channel end.
  ~HelperProcess();

  HelperProcess(const HelperProcess&) = delete;
  HelperProcess& operator=(const HelperProcess&) = delete;

  Channel& channel() { return channel_; }
  pid_t pid() const { return pid_; }
  // The pidfd (readable once the helper has exited), for callers that poll
  // several helpers.
  int pidfd() const { return pidfd_.get(); }

  // Sends `request` and waits for one reply, watching the process (pidfd) at
  // the same time: if the helper dies first, UNAVAILABLE
  // "garuda-auditor (pid 123) was killed by signal 9" / "exited with status
  // 1", at once, never a hang.
  absl::Status Call(const google::protobuf::MessageLite& request,
                    google::protobuf::MessageLite* reply,
                    std::vector<UniqueFd>* fds = nullptr,
                    absl::Span<const int> request_fds = {});
  // Non-blocking: OK while running; UNAVAILABLE with the exit description
  // once it has died.
  absl::Status CheckAlive();
  // Closes the channel and waits for a clean exit (kills after `grace`).
  // OK when the helper exited with status 0; otherwise UNAVAILABLE with the
  // exit description.
  absl::Status Stop(absl::Duration grace = absl::Seconds(5));

  // "garuda-auditor (pid 123) exited with status 3" once it has died.
  // Empty while running.
  const std::string& exit_description() const { return exit_description_; }
  // The raw wait status once it has died.
  int wait_status() const { return wait_status_; }

 private:
  friend class PendingHelper;
  // A child forked and set up, before or right at its exec.
  struct ForkedHelper {
    pid_t pid;
    UniqueFd socket;      // the parent's end of the channel
    UniqueFd error_read;  // the exec's errno, or end of file on success
    UniqueFd go;          // deferred: one byte lets the child exec
    ChannelOptions channel_options;
    std::string path;
  };
  static absl::StatusOr<ForkedHelper> ForkHelper(const HelperOptions& options,
                                                 bool deferred);
  static absl::StatusOr<std::unique_ptr<HelperProcess>> FinishSpawn(
      ForkedHelper forked);
  HelperProcess(pid_t pid, UniqueFd pidfd, Channel channel, std::string name);
  // Waits up to `timeout` for the helper to exit and reaps it. True once it
  // has been reaped (now or before).
  bool WaitForExit(absl::Duration timeout);
  // UNAVAILABLE with the exit description, `detail` appended.
  absl::Status DeathStatus(absl::string_view detail = "") const;

  pid_t pid_;
  UniqueFd pidfd_;
  Channel channel_;
  std::string name_;
  bool reaped_ = false;
  int wait_status_ = 0;
  std::string exit_description_;
};

// A helper forked now, while this process may still start what it will not
// be able to once it locks itself down, and exec'd only when Start() is
// called (garuda-stager's on_host runner, at the first host command the
// person agrees to). Until then the child is a copy of this process that
// waits in read(2) on a pipe, before exec: it holds the channel's end, the
// pipe and standard input, output and error, and runs no code of the
// helper's program. Dropped without Start(): the child exits unexec'd.
class PendingHelper {
 public:
  static absl::StatusOr<std::unique_ptr<PendingHelper>> Fork(
      const HelperOptions& options);
  ~PendingHelper();
  PendingHelper(const PendingHelper&) = delete;
  PendingHelper& operator=(const PendingHelper&) = delete;

  pid_t pid() const { return forked_ ? forked_->pid : -1; }
  // Lets the child exec; the helper as Spawn returns it. Once only.
  absl::StatusOr<std::unique_ptr<HelperProcess>> Start();

 private:
  explicit PendingHelper(HelperProcess::ForkedHelper forked)
      : forked_(std::move(forked)) {}
  std::optional<HelperProcess::ForkedHelper> forked_;
};

// The serving side of a program started that way: the Channel on
// --channel-fd. Checks that `fd` is an open Unix stream socket and marks it
// close-on-exec.
absl::StatusOr<Channel> ChannelFromFd(int fd, ChannelOptions options = {});

// "exited with status 3", "was killed by signal 9" for a wait status.
std::string DescribeWaitStatus(int wait_status);

}  // namespace ipc
}  // namespace garuda

#endif  // GARUDA_LIB_IPC_HELPER_PROCESS_H_
