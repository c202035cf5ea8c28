// The calling side of a channel, typed by its envelope: `Client<Request,
// Reply>` numbers each request (seq from 1), sends it to a helper process
// (HelperProcess::Call: the helper's death is noticed at once), checks that
// the reply echoes that seq, and turns an `Error` reply into a status that
// starts with the helper's name. Each channel's client (lib/apply/client.h,
// lib/staging/client.h, lib/audit/client.h) is a thin layer over it that
// picks the verb out of the reply.
#ifndef GARUDA_LIB_IPC_CLIENT_H_
#define GARUDA_LIB_IPC_CLIENT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "lib/base/unique_fd.h"
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

  // Sends `request` with the next seq (and `request_fds` with it) and
  // returns the reply, whose descriptors go to `reply_fds` (none may come
  // when it is null). DATA_LOSS when the reply answers another request; the
  // status of an Error reply; the helper's death as UNAVAILABLE.
  absl::StatusOr<Reply> Call(Request request,
                             std::vector<UniqueFd>* reply_fds = nullptr,
                             absl::Span<const int> request_fds = {}) {
    request.set_seq(++seq_);
    Reply reply;
    absl::Status called =
        process_->Call(request, &reply, reply_fds, request_fds);
    if (!called.ok()) return called;
    if (reply.seq() != seq_) {
      return absl::DataLossError(absl::StrCat(
          peer_, " answered request ", reply.seq(), " instead of ", seq_));
    }
    if (reply.has_error()) return ErrorReplyStatus(reply.error(), peer_);
    return reply;
  }

  const std::string& peer() const { return peer_; }
  HelperProcess* process() const { return process_; }

 private:
  HelperProcess* process_;
  std::string peer_;
  uint64_t seq_ = 0;
};

}  // namespace ipc
}  // namespace garuda

#endif  // GARUDA_LIB_IPC_CLIENT_H_
