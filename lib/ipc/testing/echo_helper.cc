// A helper program for the lib/ipc tests: serves lib/ipc/ipc_test.proto's echo
// channel on --channel-fd=N. Besides echoing it can crash on a verb (raise a
// signal), exit with a status, hang, and list its own open descriptors.
// With --wrong-seq it answers every request with the seq after its own (a
// broken server, for lib/ipc/client_test). With --at-end=PATH it creates PATH
// once its channel has ended (what a helper does at an orderly end).
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
  bool wrong_seq = false;
  std::string at_end;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--wrong-seq") {
      wrong_seq = true;
      continue;
    }
    if (absl::StartsWith(arg, "--at-end=")) {
      at_end = std::string(arg.substr(std::strlen("--at-end=")));
      continue;
    }
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
  if (wrong_seq) {
    garuda::ipc_test::EchoRequest request;
    while (channel->Receive(&request).ok()) {
      garuda::ipc_test::EchoReply reply;
      reply.set_seq(request.seq() + 1);
      reply.mutable_echoed()->set_text(request.echo().text());
      if (!channel->Send(reply).ok()) return 1;
    }
    return 0;
  }
  std::unique_ptr<EchoDispatcher> dispatcher = MakeEchoDispatcher();
  AddProcessVerbs(*dispatcher);
  absl::Status status = dispatcher->Serve(*channel);
  if (!at_end.empty()) {
    std::FILE* file = std::fopen(at_end.c_str(), "w");
    if (file != nullptr) std::fclose(file);
  }
  if (!status.ok()) {
    std::fprintf(stderr, "echo_helper: %s\n",
                 std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
