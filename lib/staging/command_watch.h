// The watch socket of one command (proto/stager_service.proto
// RunCommand.watched): a second, small channel beside the stager's session
// channel, for what cannot wait for the reply. It is an AF_UNIX
// SOCK_SEQPACKET socketpair made by garuda-agent for one RunCommand; one end
// rides on the request. Each message is one kind byte, then data:
//
//   stager -> agent   's'         the command started (any question of the
//                                 stager's own is over)
//                     'o' BYTES   a piece of its stdout, 'e' of its stderr
//   agent -> stager   'c'         stop the command
//
// The stager never waits on it: a piece the agent does not read in time is
// dropped (the reply carries the whole, capped output). The stager never
// reads it either: that it is readable (a byte came, or the agent is gone)
// is the stop (sandbox/sandbox.h RunOptions::cancel_fd).
#ifndef GARUDA_LIB_STAGING_COMMAND_WATCH_H_
#define GARUDA_LIB_STAGING_COMMAND_WATCH_H_

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/base/cancel_flag.h"
#include "lib/base/unique_fd.h"

namespace garuda {

inline constexpr char kWatchStarted = 's';
inline constexpr char kWatchStdout = 'o';
inline constexpr char kWatchStderr = 'e';
inline constexpr char kWatchStop = 'c';

// The stager's end, checked when it is taken from a request.
class WatchSocket {
 public:
  // INVALID_ARGUMENT unless `fd` is an AF_UNIX SOCK_SEQPACKET socket: a
  // descriptor of another kind (a file, a pipe the agent never reads) is
  // refused before the command runs.
  static absl::StatusOr<WatchSocket> Adopt(UniqueFd fd);

  // Polled for the stop by the run (RunOptions::cancel_fd).
  int fd() const { return fd_.get(); }
  void Started() const;
  // stream: 1 stdout, 2 stderr.
  void Output(int stream, absl::string_view data) const;

 private:
  explicit WatchSocket(UniqueFd fd) : fd_(std::move(fd)) {}
  void Send(char kind, absl::string_view data) const;
  UniqueFd fd_;
};

// What the agent's side does while a command runs. The callbacks are called
// on the watching thread, one at a time, while the caller waits for the
// reply (they must not use what the caller's thread uses meanwhile).
struct CommandWatch {
  // Polled (every 100 ms): once set, the stop is sent, once.
  const CancelFlag* cancel = nullptr;
  std::function<void()> on_started;
  // stream: 1 stdout, 2 stderr.
  std::function<void(int stream, absl::string_view data)> on_output;
  // About every `tick` after the start, with the time since it.
  std::function<void(absl::Duration elapsed)> on_tick;
  absl::Duration tick = absl::Seconds(1);
};

// The agent's end: the socketpair and the thread that reads it.
class CommandWatcher {
 public:
  static absl::StatusOr<std::unique_ptr<CommandWatcher>> Start(
      CommandWatch watch);
  // Stops the thread (what is still unread is dropped).
  ~CommandWatcher();
  CommandWatcher(const CommandWatcher&) = delete;
  CommandWatcher& operator=(const CommandWatcher&) = delete;

  // The end to send with the request.
  int peer_fd() const { return peer_.get(); }
  // True once the stop was sent.
  bool stop_sent() const { return stop_sent_.load(); }

 private:
  CommandWatcher(CommandWatch watch, UniqueFd ours, UniqueFd peer,
                 UniqueFd wake_read, UniqueFd wake_write);
  void Loop();

  CommandWatch watch_;
  UniqueFd ours_, peer_, wake_read_, wake_write_;
  std::atomic<bool> stop_sent_{false};
  std::thread thread_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_COMMAND_WATCH_H_
