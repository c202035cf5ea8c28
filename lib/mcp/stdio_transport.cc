// Newline-delimited JSON-RPC over a server's stdin and stdout.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/acp/json_rpc.h"
#include "lib/base/errno_status.h"
#include "lib/mcp/client.h"
#include "lib/mcp/wire.h"

namespace garuda {
namespace mcp {
namespace {

// The cancel flag is looked at this often while waiting for the server.
constexpr absl::Duration kCancelPoll = absl::Milliseconds(50);

int PollMillis(absl::Duration left) {
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(
      absl::ToInt64Milliseconds(std::min(left, kCancelPoll)) + 1);
}

class Stdio : public Transport {
 public:
  Stdio(UniqueFd to_server, UniqueFd from_server, std::string server_name,
        absl::Duration send_timeout)
      : send_timeout_(send_timeout),
        to_server_(std::move(to_server)),
        from_server_(std::move(from_server)),
        name_(std::move(server_name)),
        reader_(from_server_.get(), kMaxMessageBytes) {
    // Our end only: a server that stops reading must not block Send.
    int flags = ::fcntl(to_server_.get(), F_GETFL);
    if (flags >= 0) ::fcntl(to_server_.get(), F_SETFL, flags | O_NONBLOCK);
  }

  absl::Status Send(const Value& message) override {
    if (!to_server_.valid()) {
      return absl::FailedPreconditionError(
          ServerMessage(name_, "is closed (its stdin was closed)"));
    }
    std::string line = acp::JsonLine(message);
    line.push_back('\n');
    absl::string_view rest = line;
    const absl::Time deadline = absl::Now() + send_timeout_;
    while (!rest.empty()) {
      // send(MSG_NOSIGNAL) on a socket; on a pipe, write(): a server that
      // exited gives EPIPE (the agent ignores SIGPIPE: lib/agent/agent.cc).
      ssize_t put = ::send(to_server_.get(), rest.data(), rest.size(),
                           MSG_NOSIGNAL | MSG_DONTWAIT);
      if (put < 0 && errno == ENOTSOCK) {
        put = ::write(to_server_.get(), rest.data(), rest.size());
      }
      if (put > 0) {
        rest.remove_prefix(static_cast<size_t>(put));
        continue;
      }
      if (put < 0 && errno == EINTR) continue;
      if (put < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        absl::Duration left = deadline - absl::Now();
        if (left <= absl::ZeroDuration()) {
          return absl::DeadlineExceededError(ServerMessage(
              name_, absl::StrCat("did not read its stdin for ",
                                  absl::FormatDuration(send_timeout_),
                                  " (a message to it could not be sent)")));
        }
        pollfd out{to_server_.get(), POLLOUT, 0};
        ::poll(&out, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
        continue;
      }
      if (put < 0 && (errno == EPIPE || errno == ECONNRESET)) {
        return absl::UnavailableError(
            ServerMessage(name_, "exited (its stdin is closed)"));
      }
      return ErrnoStatus(errno, ServerMessage(name_, "write(its stdin)"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<Value> Receive(absl::Time deadline,
                                const CancelFlag* cancel) override {
    while (true) {
      if (std::optional<acp::LineReader::Line> line = reader_.Next()) {
        if (line->too_long) {
          return absl::ResourceExhaustedError(ServerMessage(
              name_, absl::StrCat("sent a message of ", line->bytes,
                                  " bytes, over the limit of ",
                                  kMaxMessageBytes, " (it was thrown away)")));
        }
        return ParseServerMessage(name_, line->text);
      }
      if (reader_.ended()) {
        return absl::UnavailableError(
            ServerMessage(name_, "closed its stdout (it exited or crashed)"));
      }
      if (cancel != nullptr && cancel->cancelled()) {
        return absl::CancelledError(ServerMessage(name_, "cancelled"));
      }
      const absl::Duration left = deadline - absl::Now();
      pollfd in{from_server_.get(), POLLIN, 0};
      int ready = ::poll(&in, 1, PollMillis(left));
      if (ready < 0 && errno != EINTR) {
        return ErrnoStatus(errno, ServerMessage(name_, "poll(its stdout)"));
      }
      if (ready > 0) {
        absl::StatusOr<bool> more = reader_.Fill();
        if (!more.ok()) {
          return absl::UnavailableError(
              ServerMessage(name_, more.status().message()));
        }
        continue;
      }
      if (left <= absl::ZeroDuration()) {
        return absl::DeadlineExceededError(
            ServerMessage(name_, "sent nothing in time"));
      }
    }
  }

  void Close() override { to_server_.Reset(); }

 private:
  // A server that stops reading fills the pipe: the write must not wait
  // for ever.
  const absl::Duration send_timeout_;
  UniqueFd to_server_;
  UniqueFd from_server_;
  std::string name_;
  acp::LineReader reader_;
};

}  // namespace

std::unique_ptr<Transport> StdioTransport(UniqueFd to_server,
                                          UniqueFd from_server,
                                          std::string server_name,
                                          absl::Duration send_timeout) {
  return std::make_unique<Stdio>(std::move(to_server), std::move(from_server),
                                 std::move(server_name), send_timeout);
}

}  // namespace mcp
}  // namespace garuda
