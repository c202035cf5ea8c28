// A helper program for the lib/ipc tests: serves lib/ipc/ipc_test.proto's echo
// channel on --channel-fd=N. Besides echoing it can crash on a verb (raise a
// signal), exit with a status, hang, and list its own open descriptors.
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "lib/ipc/helper_process.h"
#include "lib/ipc/testing/echo_service.h"

int main(int argc, char** argv) {
  using namespace garuda::ipc;
  int channel_fd = -1;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::StartsWith(arg, "--channel-fd=") &&
        absl::SimpleAtoi(arg.substr(std::strlen("--channel-fd=")),
                         &channel_fd)) {
      continue;
    }
    std::fprintf(stderr, "usage: echo_helper --channel-fd=N\n");
    return 2;
  }
  ChannelOptions options;
  options.peer_name = "echo client";
  absl::StatusOr<Channel> channel = ChannelFromFd(channel_fd, options);
  if (!channel.ok()) {
    std::fprintf(stderr, "echo_helper: %s\n",
                 std::string(channel.status().message()).c_str());
    return 2;
  }
  std::unique_ptr<EchoDispatcher> dispatcher = MakeEchoDispatcher();
  AddProcessVerbs(*dispatcher);
  absl::Status status = dispatcher->Serve(*channel);
  if (!status.ok()) {
    std::fprintf(stderr, "echo_helper: %s\n",
                 std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
