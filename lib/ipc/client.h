// The calling side of a channel, typed by its envelope: `Client<Request,
// Reply>` numbers each request (seq from 1), sends it to a helper process
// (HelperProcess::Call: the helper's death is noticed at once) or over a
// bare channel (a child agent's channel to the budgeter, passed by its
// parent: there is no process to watch), checks that the reply echoes that
// seq, and turns an `Error` reply into a status that starts with the
// helper's name. It tells the two kinds of failure apart: an Error reply
// is the peer's answer (the channel goes on), a transport failure (send,
// receive, the peer's death, a reply to another request) is said by
// transport(). Each channel's client (lib/apply/client.h,
// lib/staging/client.h, lib/audit/client.h, lib/budget/client.h) is a thin
// layer over it that picks the verb out of the reply.
#ifndef GARUDA_LIB_IPC_CLIENT_H_
#define GARUDA_LIB_IPC_CLIENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/channel.h"
#include "lib/ipc/helper_process.h"
#include "proto/common.pb.h"

namespace garuda {
namespace ipc {

// An Error reply of `peer` as a status: its code (UNKNOWN for a code of 0,
// which no error may carry) and "peer: message".
absl::Status ErrorReplyStatus(const Error& error, absl::string_view peer);

template <typename Request, typename Reply>
class Client {
 public:
  // `process` is not owned and outlives the client; `peer` names it in
  // errors ("garuda-applier").
  Client(HelperProcess* process, std::string peer)
      : process_(process), peer_(std::move(peer)) {}
  // Over `channel`, which the client owns.
  Client(Channel channel, std::string peer)
      : channel_(std::move(channel)), peer_(std::move(peer)) {}

  // Sends `request` with the next seq (and `request_fds` with it) and
  // returns the reply, whose descriptors go to `reply_fds` (none may come
  // when it is null). DATA_LOSS when the reply answers another request; the
  // status of an Error reply; the helper's death as UNAVAILABLE.
  absl::StatusOr<Reply> Call(Request request,
                             std::vector<UniqueFd>* reply_fds = nullptr,
                             absl::Span<const int> request_fds = {}) {
    request.set_seq(++seq_);
    Reply reply;
    transport_ = Exchange(request, &reply, reply_fds, request_fds);
    if (transport_.ok() && reply.seq() != seq_) {
      transport_ = absl::DataLossError(absl::StrCat(
          peer_, " answered request ", reply.seq(), " instead of ", seq_));
    }
    if (!transport_.ok()) return transport_;
    if (reply.has_error()) return ErrorReplyStatus(reply.error(), peer_);
    return reply;
  }

  // The last call's channel: OK when it brought the reply to its request
  // (an Error reply too); else why not (the status that call returned).
  const absl::Status& transport() const { return transport_; }

  const std::string& peer() const { return peer_; }
  HelperProcess* process() const { return process_; }
  Channel& channel() {
    return process_ != nullptr ? process_->channel() : *channel_;
  }

 private:
  absl::Status Exchange(const Request& request, Reply* reply,
                        std::vector<UniqueFd>* reply_fds,
                        absl::Span<const int> request_fds) {
    if (process_ != nullptr) {
      return process_->Call(request, reply, reply_fds, request_fds);
    }
    absl::Status sent = channel_->Send(request, request_fds);
    if (!sent.ok()) return sent;
    return channel_->Receive(reply, reply_fds);
  }

  HelperProcess* process_ = nullptr;
  std::optional<Channel> channel_;  // without a process
  std::string peer_;
  uint64_t seq_ = 0;
  absl::Status transport_;
};

}  // namespace ipc
}  // namespace garuda

#endif  // GARUDA_LIB_IPC_CLIENT_H_
