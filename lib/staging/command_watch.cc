#include "lib/staging/command_watch.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/base/errno_status.h"

namespace garuda {
namespace {

// One message: the kind byte and up to one read of output (the sandbox reads
// 64 KiB at a time).
constexpr size_t kMaxMessage = 1 + 65536;

}  // namespace

absl::StatusOr<WatchSocket> WatchSocket::Adopt(UniqueFd fd) {
  struct stat st;
  int type = 0, domain = 0;
  socklen_t size = sizeof type;
  socklen_t domain_size = sizeof domain;
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISSOCK(st.st_mode) ||
      ::getsockopt(fd.get(), SOL_SOCKET, SO_TYPE, &type, &size) != 0 ||
      ::getsockopt(fd.get(), SOL_SOCKET, SO_DOMAIN, &domain, &domain_size) !=
          0 ||
      type != SOCK_SEQPACKET || domain != AF_UNIX) {
    return absl::InvalidArgumentError(
        "RunCommand: the watch descriptor is not an AF_UNIX SOCK_SEQPACKET "
        "socket; nothing was run");
  }
  return WatchSocket(std::move(fd));
}

void WatchSocket::Send(char kind, absl::string_view data) const {
  std::string message(1, kind);
  message.append(data.data(), std::min(data.size(), kMaxMessage - 1));
  // Never waits: a full socket drops the piece (the reply has it all), and
  // an agent that went away is no reason to stop.
  (void)::send(fd_.get(), message.data(), message.size(),
               MSG_DONTWAIT | MSG_NOSIGNAL);
}

void WatchSocket::Started() const { Send(kWatchStarted, ""); }

void WatchSocket::Output(int stream, absl::string_view data) const {
  Send(stream == 2 ? kWatchStderr : kWatchStdout, data);
}

absl::StatusOr<std::unique_ptr<CommandWatcher>> CommandWatcher::Start(
    CommandWatch watch) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    return LastErrnoStatus("socketpair for the command's watch socket");
  }
  UniqueFd ours(pair[0]), peer(pair[1]);
  int wake[2];
  if (::pipe2(wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    return LastErrnoStatus("pipe2 for the command's watch thread");
  }
  return std::unique_ptr<CommandWatcher>(
      new CommandWatcher(std::move(watch), std::move(ours), std::move(peer),
                         UniqueFd(wake[0]), UniqueFd(wake[1])));
}

CommandWatcher::CommandWatcher(CommandWatch watch, UniqueFd ours,
                               UniqueFd peer, UniqueFd wake_read,
                               UniqueFd wake_write)
    : watch_(std::move(watch)),
      ours_(std::move(ours)),
      peer_(std::move(peer)),
      wake_read_(std::move(wake_read)),
      wake_write_(std::move(wake_write)) {
  thread_ = std::thread([this] { Loop(); });
}

CommandWatcher::~CommandWatcher() {
  (void)!::write(wake_write_.get(), "x", 1);
  if (thread_.joinable()) thread_.join();
}

void CommandWatcher::Loop() {
  constexpr int kPollMs = 100;
  std::string buffer(kMaxMessage, '\0');
  bool started = false;
  bool socket_open = true;
  absl::Time start, next_tick;
  for (;;) {
    if (watch_.cancel != nullptr && watch_.cancel->cancelled() &&
        !stop_sent_.load()) {
      stop_sent_.store(true);
      (void)::send(ours_.get(), &kWatchStop, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    }
    if (started && watch_.on_tick && absl::Now() >= next_tick) {
      watch_.on_tick(absl::Now() - start);
      next_tick += watch_.tick;
    }
    struct pollfd fds[2] = {{wake_read_.get(), POLLIN, 0},
                            {ours_.get(), POLLIN, 0}};
    int ready = ::poll(fds, socket_open ? 2 : 1, kPollMs);
    if (ready < 0 && errno != EINTR) return;
    if (ready <= 0) continue;
    if (fds[0].revents != 0) return;
    if (fds[1].revents == 0) continue;
    ssize_t n = ::recv(ours_.get(), buffer.data(), buffer.size(), 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      socket_open = false;  // the stager closed its end: nothing more comes
      continue;
    }
    absl::string_view message(buffer.data(), static_cast<size_t>(n));
    if (message[0] == kWatchStarted && !started) {
      started = true;
      start = absl::Now();
      next_tick = start + watch_.tick;
      if (watch_.on_started) watch_.on_started();
    } else if ((message[0] == kWatchStdout || message[0] == kWatchStderr) &&
               watch_.on_output) {
      watch_.on_output(message[0] == kWatchStderr ? 2 : 1,
                       message.substr(1));
    }
  }
}

}  // namespace garuda
