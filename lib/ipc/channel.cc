#include "lib/ipc/channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"

namespace garuda {
namespace ipc {
namespace {

// A buffer kept between frames is given back when a large frame made it grow
// past this, so that many idle channels do not each hold their largest frame.
constexpr size_t kKeptBufferBytes = 64 << 10;

// What a read-ahead channel asks for at least in one read.
constexpr size_t kReadAheadBytes = 4096;

void GiveBackIfLarge(std::string* buffer) {
  if (buffer->capacity() > kKeptBufferBytes) std::string().swap(*buffer);
}

// Takes every descriptor in the control data of `msg` into `out`, so that
// each is owned (and closed) exactly once whatever happens next. Returns
// false when the control data held something other than SCM_RIGHTS.
bool TakeDescriptors(struct msghdr* msg, std::vector<UniqueFd>* out) {
  bool only_rights = true;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(msg); c != nullptr;
       c = CMSG_NXTHDR(msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      const unsigned char* data = CMSG_DATA(c);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, data + i * sizeof(int), sizeof(int));
        out->emplace_back(fd);
      }
    } else {
      only_rights = false;
    }
  }
  return only_rights;
}

}  // namespace

Channel::Channel(UniqueFd socket, ChannelOptions options)
    : socket_(std::move(socket)), options_(std::move(options)) {
  if (!socket_.valid()) {
    ended_ = absl::FailedPreconditionError(
        absl::StrCat("channel to ", options_.peer_name, " has no socket"));
  }
}

absl::Status Channel::status() const { return ended_; }

absl::Status Channel::Ended() const { return ended_; }

absl::Status Channel::Fail(absl::Status status) {
  if (ended_.ok()) ended_ = status;
  return status;
}

void Channel::Close() {
  if (socket_.valid()) {
    ::shutdown(socket_.get(), SHUT_RDWR);
    socket_.Reset();
  }
  if (ended_.ok()) {
    ended_ = absl::FailedPreconditionError(
        absl::StrCat("channel to ", options_.peer_name, " is closed"));
  }
}

absl::Status Channel::Send(const google::protobuf::MessageLite& message,
                           absl::Span<const int> fds) {
  if (!ended_.ok()) return Ended();
  return SendUnchecked(message, fds);
}

absl::Status Channel::SendUnchecked(
    const google::protobuf::MessageLite& message, absl::Span<const int> fds) {
  if (!socket_.valid()) return Ended();
  const std::string& peer = options_.peer_name;
  if (fds.size() >
      static_cast<size_t>(std::max(options_.max_fds_per_frame, 0))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing to send ", fds.size(), " descriptors to ", peer,
        ": over the limit of ", options_.max_fds_per_frame, " per frame"));
  }
  size_t size = message.ByteSizeLong();
  if (size > options_.max_frame_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("refusing to send a frame of ", size, " bytes to ", peer,
                     ": over the ", options_.max_frame_bytes, "-byte limit"));
  }
  // The header and the body in one buffer, kept between frames: one
  // sendmsg per frame and no allocation once the buffer has grown.
  std::string& frame = send_buffer_;
  frame.resize(kFrameHeaderBytes + size);
  EncodeFrameLength(static_cast<uint32_t>(size), &frame[0]);
  if (!message.SerializeToArray(&frame[kFrameHeaderBytes],
                                static_cast<int>(size))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot serialize a ", message.GetTypeName(), " for ", peer));
  }

  size_t sent = 0;
  while (sent < frame.size()) {
    // MSG_NOSIGNAL: a peer that has gone is an error here, not a SIGPIPE
    // that kills the whole process.
    ssize_t n =
        SendWithDescriptors(socket_.get(), &frame[sent], frame.size() - sent,
                            sent == 0 ? fds : absl::Span<const int>());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EBADF && sent == 0 && !fds.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cannot send descriptors to ", peer, ": one of them is not open"));
      }
      if (errno == EPIPE || errno == ECONNRESET) {
        return Fail(absl::UnavailableError(absl::StrCat(
            peer, " closed the channel (", std::strerror(errno), ")")));
      }
      return Fail(LastErrnoStatus(absl::StrCat("sendmsg to ", peer)));
    }
    sent += static_cast<size_t>(n);
  }
  GiveBackIfLarge(&frame);
  return absl::OkStatus();
}

absl::Status Channel::ReadFrameBytes(char* buffer, size_t size, size_t capacity,
                                     bool fds_allowed,
                                     std::vector<UniqueFd>* fds, int watch_fd,
                                     size_t* received, size_t* first_read) {
  const std::string& peer = options_.peer_name;
  const int max_fds = std::max(options_.max_fds_per_frame, 0);
  // Room for one descriptor more than the cap, so that "too many" shows as a
  // count; anything beyond that shows as MSG_CTRUNC.
  const size_t space = CMSG_SPACE((max_fds + 1) * sizeof(int));
  uint64_t control_on_stack[8];  // uint64_t: cmsghdr alignment
  std::vector<uint64_t> control_on_heap;
  uint64_t* control = control_on_stack;
  if (space > sizeof(control_on_stack)) {
    control_on_heap.resize((space + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    control = control_on_heap.data();
  }
  size_t done = 0;
  *received = 0;
  if (watch_fd >= 0 && !watch_tick_set_) {
    // While watching, each read blocks for at most a tick, after which
    // `watch_fd` is looked at: a read that blocks is woken by the data
    // itself, which costs less than a poll on both before every read.
    struct timeval tick = {
        0, static_cast<suseconds_t>(absl::ToInt64Microseconds(kWatchTick))};
    if (::setsockopt(socket_.get(), SOL_SOCKET, SO_RCVTIMEO, &tick,
                     sizeof tick) != 0) {
      return LastErrnoStatus(
          absl::StrCat("setsockopt(SO_RCVTIMEO) on the channel to ", peer));
    }
    watch_tick_set_ = true;
  }
  while (done < size) {
    struct iovec iov = {buffer + done, capacity - done};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = space;
    // MSG_CMSG_CLOEXEC: a descriptor we receive never leaks into a program
    // we start later.
    ssize_t n = ::recvmsg(socket_.get(), &msg, MSG_CMSG_CLOEXEC);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (watch_fd >= 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        // A tick with nothing to read: stop only when `watch_fd` fired and
        // the socket still has nothing (an answer sent just before the peer
        // died is still read). The poll waits up to a tick itself, so that a
        // socket that never blocks (O_NONBLOCK) is waited on, not spun on.
        struct pollfd polls[2] = {{socket_.get(), POLLIN, 0},
                                  {watch_fd, POLLIN, 0}};
        int ready = ::poll(
            polls, 2, static_cast<int>(absl::ToInt64Milliseconds(kWatchTick)));
        if (ready < 0 && errno != EINTR) {
          return LastErrnoStatus(absl::StrCat("poll on the channel to ", peer));
        }
        if (ready > 0 && polls[0].revents == 0 && polls[1].revents != 0) {
          *received = done;
          return absl::UnavailableError(absl::StrCat("stopped waiting for ",
                                                     peer, " after ", done,
                                                     " of ", size, " bytes"));
        }
        continue;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        // SO_RCVTIMEO ran out (or a non-blocking socket had nothing).
        *received = done;
        return absl::DeadlineExceededError(absl::StrCat(
            peer, ": nothing more arrived within the receive timeout, after ",
            done, " of ", size, " bytes"));
      }
      if (errno == ECONNRESET) {
        return absl::UnavailableError(absl::StrCat(
            peer, " reset the channel after ", done, " of ", size, " bytes"));
      }
      return LastErrnoStatus(absl::StrCat("recvmsg from ", peer));
    }
    // Own every descriptor first: on any error below they are closed.
    std::vector<UniqueFd> arrived;
    bool only_rights = TakeDescriptors(&msg, &arrived);
    if (msg.msg_flags & MSG_CTRUNC) {
      return absl::ResourceExhaustedError(
          absl::StrCat(peer, ": control data truncated (more than ", max_fds,
                       " descriptors on one frame?)"));
    }
    if (!only_rights) {
      return absl::InvalidArgumentError(absl::StrCat(
          peer, ": control data other than SCM_RIGHTS on a frame"));
    }
    if (!arrived.empty()) {
      if (!fds_allowed || done != 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            peer, ": descriptors that are not on the first byte of a frame"));
      }
      if (arrived.size() > static_cast<size_t>(max_fds)) {
        return absl::ResourceExhaustedError(absl::StrCat(
            peer, ": ", arrived.size(),
            " descriptors on one frame, over the limit of ", max_fds));
      }
      if (fds == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat(peer, ": ", arrived.size(),
                         " descriptors on a frame where none are expected"));
      }
      for (UniqueFd& fd : arrived) fds->push_back(std::move(fd));
    }
    if (n == 0) {
      *received = done;
      return absl::OutOfRangeError("end of file");
    }
    if (done == 0 && first_read != nullptr) {
      *first_read = static_cast<size_t>(n);
    }
    done += static_cast<size_t>(n);
  }
  *received = done;
  return absl::OkStatus();
}

absl::Status Channel::Receive(google::protobuf::MessageLite* message,
                              std::vector<UniqueFd>* fds) {
  return ReceiveImpl(message, fds, -1);
}

absl::Status Channel::ReceiveWatching(google::protobuf::MessageLite* message,
                                      std::vector<UniqueFd>* fds,
                                      int watch_fd) {
  return ReceiveImpl(message, fds, watch_fd);
}

bool Channel::has_buffered_frame() const {
  if (read_end_ > read_buffer_.size()) return false;  // moved from
  const size_t have = read_end_ - read_start_;
  if (have < kFrameHeaderBytes) return false;
  return have - kFrameHeaderBytes >=
         DecodeFrameLength(&read_buffer_[read_start_]);
}

size_t Channel::MakeRoom(size_t frame_bytes) {
  const size_t want = options_.read_ahead
                          ? std::max(frame_bytes, kReadAheadBytes)
                          : frame_bytes;
  if (read_start_ > 0 && read_start_ + want > read_buffer_.size()) {
    std::memmove(&read_buffer_[0], &read_buffer_[read_start_],
                 read_end_ - read_start_);
    read_end_ -= read_start_;
    read_start_ = 0;
  }
  if (read_buffer_.size() < read_start_ + want) {
    read_buffer_.resize(read_start_ + want);
  }
  // Without read-ahead, never a byte past the frame.
  return options_.read_ahead ? read_buffer_.size() - read_end_
                             : read_start_ + frame_bytes - read_end_;
}

absl::Status Channel::ReceiveImpl(google::protobuf::MessageLite* message,
                                  std::vector<UniqueFd>* fds, int watch_fd) {
  if (!ended_.ok()) return Ended();
  if (fds != nullptr) fds->clear();
  const std::string& peer = options_.peer_name;
  if (read_start_ == read_end_) read_start_ = read_end_ = 0;
  // Descriptors ride on the first byte of a frame: they are taken only by a
  // read that begins the frame (none of it was read ahead by an earlier call).
  const bool fds_allowed = read_start_ == read_end_;
  // Descriptors stay here until the whole frame has been read and parsed, so
  // a bad frame never hands any out.
  std::vector<UniqueFd> arrived;
  size_t first_read = 0;  // bytes brought by the read that took descriptors
  size_t have = read_end_ - read_start_;
  size_t received = 0;
  absl::Status status;
  if (have < kFrameHeaderBytes) {
    size_t room = MakeRoom(kFrameHeaderBytes);
    status = ReadFrameBytes(
        &read_buffer_[read_end_], kFrameHeaderBytes - have, room, fds_allowed,
        fds == nullptr ? nullptr : &arrived, watch_fd, &received, &first_read);
    read_end_ += received;
    have += received;
    if (absl::IsOutOfRange(status)) {
      if (have == 0) {
        // A clean close between frames: not an error that ends the channel.
        return absl::OutOfRangeError(absl::StrCat(peer, " closed the channel"));
      }
      return Fail(absl::DataLossError(
          absl::StrCat(peer, ": truncated frame: end of file after ", have,
                       " of ", kFrameHeaderBytes, " header bytes")));
    }
    if (absl::IsDeadlineExceeded(status) && have == 0) {
      // No frame started: the stream is still in step, the channel goes on.
      return absl::DeadlineExceededError(
          absl::StrCat(peer, ": no frame within the receive timeout"));
    }
    if (!status.ok()) return Fail(status);
  }

  uint32_t length = DecodeFrameLength(&read_buffer_[read_start_]);
  if (length > options_.max_frame_bytes) {
    return Fail(absl::ResourceExhaustedError(
        absl::StrCat(peer, ": frame of ", length, " bytes over the ",
                     options_.max_frame_bytes, "-byte limit")));
  }
  const size_t total = kFrameHeaderBytes + length;
  if (have < total) {
    size_t room = MakeRoom(total);
    status =
        ReadFrameBytes(&read_buffer_[read_end_], total - have, room,
                       /*fds_allowed=*/false, nullptr, watch_fd, &received);
    read_end_ += received;
    have += received;
    if (absl::IsOutOfRange(status)) {
      return Fail(absl::DataLossError(absl::StrCat(
          peer, ": truncated frame: end of file after ",
          have - kFrameHeaderBytes, " of ", length, " body bytes")));
    }
    if (!status.ok()) return Fail(status);
  }
  if (!arrived.empty() && first_read > total) {
    // Read ahead: the read that took them also brought bytes of the next
    // frame, so whose they are cannot be told.
    return Fail(absl::InvalidArgumentError(absl::StrCat(
        peer, ": descriptors on a frame sent before its answer was read")));
  }
  const bool parsed = message->ParseFromArray(
      &read_buffer_[read_start_ + kFrameHeaderBytes], static_cast<int>(length));
  read_start_ += total;
  if (read_start_ == read_end_) {
    read_start_ = read_end_ = 0;
    GiveBackIfLarge(&read_buffer_);
  }
  if (!parsed) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat(peer, ": frame of ", length, " bytes does not parse as ",
                     message->GetTypeName())));
  }
  if (fds != nullptr) *fds = std::move(arrived);
  return absl::OkStatus();
}

ssize_t SendWithDescriptors(int socket, const char* data, size_t size,
                            absl::Span<const int> fds) {
  struct iovec iov = {const_cast<char*>(data), size};
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  std::vector<uint64_t> control;  // uint64_t: cmsghdr alignment.
  if (!fds.empty()) {
    size_t space = CMSG_SPACE(fds.size() * sizeof(int));
    control.assign((space + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
    msg.msg_control = control.data();
    msg.msg_controllen = space;
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(fds.size() * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds.data(), fds.size() * sizeof(int));
  }
  return ::sendmsg(socket, &msg, MSG_NOSIGNAL);
}

absl::StatusOr<std::pair<UniqueFd, UniqueFd>> MakeSocketPair() {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return LastErrnoStatus("socketpair(AF_UNIX, SOCK_STREAM)");
  }
  return std::make_pair(UniqueFd(pair[0]), UniqueFd(pair[1]));
}

}  // namespace ipc
}  // namespace garuda
