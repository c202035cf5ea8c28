#include "lib/acp/launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/wrappers.pb.h"
#include "lib/base/errno_status.h"

namespace garuda {
namespace acp {
namespace {

using google::protobuf::StringValue;

// In the launcher: one worker, its socket returned.
absl::StatusOr<UniqueFd> SpawnWorker(const std::vector<std::string>& argv) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return ErrnoStatus(errno, "socketpair(a session worker's socket)");
  }
  UniqueFd ours(pair[0]), theirs(pair[1]);
  std::vector<char*> args;
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return ErrnoStatus(errno, "fork(a session worker)");
  if (pid == 0) {
    // The child: only async-signal-safe calls until exec.
    ::signal(SIGCHLD, SIG_DFL);
    int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    ::dup2(2, 1);  // stdout is the editor's protocol: the front's alone
    ::dup2(theirs.get(), 3);
    ::close_range(4, ~0U, 0);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return ours;
}

[[noreturn]] void Serve(ipc::Channel channel,
                        const std::vector<std::string>& argv) {
  // Workers are reaped by the kernel; a worker's end is seen by the front
  // on its socket.
  ::signal(SIGCHLD, SIG_IGN);
  // The launcher ends with the front.
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The editor's pipes are the front's: the launcher neither reads nor
  // writes them, and must not keep them open after the front is gone.
  int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null >= 0) {
    ::dup2(null, 0);
    ::close(null);
  }
  ::dup2(2, 1);
  StringValue request;
  while (channel.Receive(&request).ok()) {
    StringValue reply;
    absl::StatusOr<UniqueFd> worker = SpawnWorker(argv);
    if (!worker.ok()) {
      reply.set_value(std::string(worker.status().message()));
      if (!channel.Send(reply).ok()) break;
      continue;
    }
    const int fds[] = {worker->get()};
    if (!channel.Send(reply, fds).ok()) break;
  }
  ::_exit(0);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Launcher>> Launcher::Start(
    std::vector<std::string> worker_argv) {
  absl::StatusOr<std::pair<UniqueFd, UniqueFd>> pair = ipc::MakeSocketPair();
  if (!pair.ok()) return pair.status();
  ipc::ChannelOptions options;
  options.max_frame_bytes = 64 * 1024;
  options.max_fds_per_frame = 1;
  pid_t pid = ::fork();
  if (pid < 0) return ErrnoStatus(errno, "fork(the session launcher)");
  if (pid == 0) {
    pair->first.Reset();
    options.peer_name = "garuda-agent acp";
    Serve(ipc::Channel(std::move(pair->second), options), worker_argv);
  }
  pair->second.Reset();
  options.peer_name = "the session launcher";
  return std::unique_ptr<Launcher>(
      new Launcher(pid, ipc::Channel(std::move(pair->first), options)));
}

Launcher::~Launcher() {
  channel_.Close();
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

absl::StatusOr<UniqueFd> Launcher::StartWorker() {
  StringValue request;
  if (absl::Status sent = channel_.Send(request); !sent.ok()) return sent;
  StringValue reply;
  std::vector<UniqueFd> fds;
  if (absl::Status got = channel_.Receive(&reply, &fds); !got.ok()) return got;
  if (!reply.value().empty() || fds.size() != 1) {
    return absl::UnavailableError(absl::StrCat(
        "could not start a session worker: ",
        reply.value().empty() ? "no socket came back" : reply.value()));
  }
  return std::move(fds[0]);
}

}  // namespace acp
}  // namespace garuda
