// Frames over one end of a SOCK_STREAM socketpair.
//
// A frame is a 4-byte little-endian length and then one serialized protobuf
// message. Descriptors ride on the first byte of a frame (SCM_RIGHTS) and are
// handed out exactly once: the caller of Receive() owns them, and any the
// receiver did not ask for, or that came with a bad frame, are closed. A
// receiver never trusts the length: it is checked against the channel's cap
// before a byte of the body is read. See docs/channels.md.
#ifndef GARUDA_LIB_IPC_CHANNEL_H_
#define GARUDA_LIB_IPC_CHANNEL_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "google/protobuf/message_lite.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/frame_header.h"

namespace garuda {
namespace ipc {

// How often a ReceiveWatching() that is still waiting looks at its watch
// descriptor: what a dead peer whose end of the channel lives on in another
// process can cost before it is noticed. A peer whose end closes with it is
// noticed at once (end of file).
inline constexpr absl::Duration kWatchTick = absl::Milliseconds(250);

template <typename Request, typename Reply>
class Dispatcher;

struct ChannelOptions {
  // Used in every error: "garuda-auditor: frame of 9000000 bytes over the
  // 1048576-byte limit".
  std::string peer_name = "peer";
  // Cap on one frame's body, in both directions.
  uint32_t max_frame_bytes = 1 << 20;
  // Cap on the descriptors that ride on one frame, in both directions.
  int max_fds_per_frame = 4;
  // Receive() reads whatever has arrived (one recvmsg for a whole small frame
  // instead of one for the length and one for the body) and keeps the bytes
  // past the frame for the next call. Only for a peer that sends a frame and
  // waits for its answer: a frame read ahead is not seen by poll(2) on fd()
  // (check has_buffered_frame() first), and descriptors that come in a read
  // that also brought the next frame end the channel.
  bool read_ahead = false;
};

// One end of a SOCK_STREAM socketpair carrying frames. Not thread-safe: use
// a Channel from one thread at a time.
class Channel {
 public:
  Channel(UniqueFd socket, ChannelOptions options = {});
  Channel(Channel&&) = default;
  Channel& operator=(Channel&&) = default;

  // Sends `message` as one frame, with `fds` (at most max_fds_per_frame)
  // riding on it. The descriptors are duplicated into the peer; the caller
  // keeps its own. A message over the cap is refused (RESOURCE_EXHAUSTED)
  // before anything is written and the channel goes on. A peer that has
  // gone is UNAVAILABLE (never SIGPIPE).
  absl::Status Send(const google::protobuf::MessageLite& message,
                    absl::Span<const int> fds = {});

  // Reads one whole frame into `message`; descriptors that came with it go
  // to `*fds` (cleared first). With `fds` == nullptr a frame that carries
  // descriptors is a protocol error.
  // OUT_OF_RANGE: the peer closed cleanly between frames.
  // RESOURCE_EXHAUSTED: oversized frame, or more descriptors than the cap.
  // DATA_LOSS: truncated frame. INVALID_ARGUMENT: bytes that do not parse,
  // or descriptors where none may be. DEADLINE_EXCEEDED: a receive timeout
  // (SO_RCVTIMEO) ran out. Any error but a clean close, or a timeout before
  // a frame began, ends the channel: later calls fail at once with the same
  // error.
  absl::Status Receive(google::protobuf::MessageLite* message,
                       std::vector<UniqueFd>* fds = nullptr);

  // Like Receive(), but also watches `watch_fd` (e.g. a pidfd): the reads
  // block in recvmsg(2) for at most kWatchTick each (the first call gives
  // the socket that receive timeout, so the channel should have none of its
  // own), and when `watch_fd` is readable while the socket has nothing to
  // read, returns UNAVAILABLE ("stopped waiting") and ends the channel: a
  // peer that died mid-frame never leaves us blocked. The wait is in the
  // read rather than in a poll on both: on a virtual machine, a poll's
  // wake-up took 5 to 17 us more per exchange (docs/budget.md).
  absl::Status ReceiveWatching(google::protobuf::MessageLite* message,
                               std::vector<UniqueFd>* fds, int watch_fd);

  // Ends the channel: the socket is shut down and closed, the peer sees end
  // of file, later calls fail with FAILED_PRECONDITION.
  void Close();

  // OK while the channel can be used; otherwise the error that ended it.
  absl::Status status() const;

  int fd() const { return socket_.get(); }
  // With read_ahead: a whole frame is waiting in this channel, so the next
  // Receive() returns without reading (poll on fd() would not show it).
  bool has_buffered_frame() const;
  const ChannelOptions& options() const { return options_; }

 private:
  template <typename Request, typename Reply>
  friend class Dispatcher;

  // Send() without the check that the channel has not ended: the Dispatcher
  // uses it to tell the peer why it ends the channel after a bad frame.
  absl::Status SendUnchecked(const google::protobuf::MessageLite& message,
                             absl::Span<const int> fds);
  // Receives at least `size` and at most `capacity` bytes into `buffer`.
  // Descriptors are accepted only when `fds_allowed` and only on the first
  // read; they go to `*fds`, and `*first_read` is what that read brought.
  // With a `watch_fd`, each read blocks for at most kWatchTick, then
  // `watch_fd` is looked at. `received` says how many bytes arrived, also
  // before an error.
  absl::Status ReadFrameBytes(char* buffer, size_t size, size_t capacity,
                              bool fds_allowed, std::vector<UniqueFd>* fds,
                              int watch_fd, size_t* received,
                              size_t* first_read = nullptr);
  // Room in the read buffer for a frame of `frame_bytes` from read_start_
  // (moving what is unread to the front when needed); returns how much the
  // next read may take.
  size_t MakeRoom(size_t frame_bytes);
  absl::Status ReceiveImpl(google::protobuf::MessageLite* message,
                           std::vector<UniqueFd>* fds, int watch_fd);
  // Records `status` as the reason the channel ended and returns it.
  absl::Status Fail(absl::Status status);
  // The error for a call on a channel that has ended.
  absl::Status Ended() const;

  UniqueFd socket_;
  ChannelOptions options_;
  absl::Status ended_;  // OK while usable.
  // Reused from frame to frame, so that a small frame allocates nothing.
  std::string send_buffer_;
  // Received bytes; [read_start_, read_end_) is not yet handed out.
  std::string read_buffer_;
  size_t read_start_ = 0;
  size_t read_end_ = 0;
  bool watch_tick_set_ = false;  // SO_RCVTIMEO is kWatchTick
};

// One sendmsg(2) of `size` bytes at `data` with `fds` riding on the first
// byte (SCM_RIGHTS), with MSG_NOSIGNAL: the building block of Channel::Send,
// also used by tests that write raw frames. Returns what sendmsg returns
// (bytes sent, or -1 with errno set).
ssize_t SendWithDescriptors(int socket, const char* data, size_t size,
                            absl::Span<const int> fds);

// A connected pair of SOCK_STREAM | SOCK_CLOEXEC Unix sockets.
absl::StatusOr<std::pair<UniqueFd, UniqueFd>> MakeSocketPair();

}  // namespace ipc
}  // namespace garuda

#endif  // GARUDA_LIB_IPC_CHANNEL_H_
