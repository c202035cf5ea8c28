#include "lib/ipc/testing/echo_service.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/ipc/testing/test_util.h"

namespace garuda {
namespace ipc {
namespace {

using ipc_test::EchoReply;
using ipc_test::EchoRequest;
using Fds = std::vector<UniqueFd>;

const std::vector<int> kAnyState = {kEchoNew, kEchoOpen, kEchoClosed};

}  // namespace

std::unique_ptr<EchoDispatcher> MakeEchoDispatcher() {
  auto dispatcher = std::make_unique<EchoDispatcher>(kEchoNew);
  dispatcher->NameState(kEchoNew, "new")
      .NameState(kEchoOpen, "open")
      .NameState(kEchoClosed, "closed")
      .On(
          EchoRequest::kOpen, {kEchoNew},
          [](const EchoRequest&, Fds&, EchoReply* reply) {
            reply->mutable_opened();
            return absl::OkStatus();
          },
          kEchoOpen)
      .On(EchoRequest::kEcho, {kEchoOpen},
          [](const EchoRequest& request, Fds&, EchoReply* reply) {
            if (request.echo().text() == "fail") {
              return absl::InvalidArgumentError("asked to fail");
            }
            reply->mutable_echoed()->set_text(request.echo().text());
            return absl::OkStatus();
          })
      .On(EchoRequest::kWriteToFd, {kEchoOpen},
          [](const EchoRequest& request, Fds& fds, EchoReply* reply) {
            if (fds.size() != 1) {
              return absl::InvalidArgumentError(
                  "write_to_fd needs exactly one descriptor");
            }
            UniqueFd fd = std::move(fds[0]);
            RETURN_IF_ERROR(WriteAll(fd.get(), request.write_to_fd().text()));
            reply->mutable_written()->set_bytes(
                request.write_to_fd().text().size());
            return absl::OkStatus();
          })
      .OnWithReplyFds(EchoRequest::kMakePipe, {kEchoOpen},
                      [](const EchoRequest& request, Fds&, EchoReply* reply,
                         Fds* reply_fds) {
                        int ends[2];
                        if (::pipe2(ends, O_CLOEXEC) != 0)
                          return LastErrnoStatus("pipe2");
                        UniqueFd read_end(ends[0]), write_end(ends[1]);
                        RETURN_IF_ERROR(WriteAll(write_end.get(),
                                                 request.make_pipe().text()));
                        reply_fds->push_back(std::move(read_end));
                        reply->mutable_pipe_made();
                        return absl::OkStatus();
                      })
      .On(
          EchoRequest::kClose, {kEchoOpen},
          [](const EchoRequest&, Fds&, EchoReply* reply) {
            reply->mutable_closed();
            return absl::OkStatus();
          },
          kEchoClosed)
      .On(EchoRequest::kListFds, kAnyState,
          [](const EchoRequest&, Fds&, EchoReply* reply) {
            for (int fd : OpenFds()) reply->mutable_fd_list()->add_fds(fd);
            return absl::OkStatus();
          });
  return dispatcher;
}

void AddProcessVerbs(EchoDispatcher& dispatcher) {
  dispatcher
      .On(EchoRequest::kCrash, kAnyState,
          [](const EchoRequest& request, Fds&, EchoReply*) {
            ::raise(request.crash().signal());
            return absl::InternalError("still alive after raise()");
          })
      .On(EchoRequest::kExit, kAnyState,
          [](const EchoRequest& request, Fds&, EchoReply*) -> absl::Status {
            ::_exit(request.exit().status());
          })
      .On(EchoRequest::kHang, kAnyState,
          [](const EchoRequest&, Fds& fds, EchoReply*) -> absl::Status {
            // Tells the test it is hanging now, then never replies.
            if (fds.size() == 1) WriteAll(fds[0].get(), "h").IgnoreError();
            fds.clear();
            for (;;) ::pause();
          });
}

}  // namespace ipc
}  // namespace garuda
