// The front's launcher: a process forked by `garuda-agent acp` before the
// front locks itself down, which starts one session worker (`garuda-agent
// acp-session`) each time the front asks and hands back the worker's socket
// (SCM_RIGHTS). It must stay unconfined, since a worker inherits every
// Landlock domain and seccomp filter of its parent and must still start
// its helpers, reach the model and write its journal; so it takes no input
// but "one more worker": the worker reads its project from the session/new
// the front forwards to it, never from the launcher.
#ifndef GARUDA_LIB_ACP_LAUNCHER_H_
#define GARUDA_LIB_ACP_LAUNCHER_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/channel.h"

namespace garuda {
namespace acp {

class Launcher {
 public:
  // Forks the launcher. `worker_argv` (argv[0] the program) is what it runs
  // each time, with the worker's socket on descriptor 3, /dev/null as its
  // standard input and its standard output sent to standard error: only
  // the front writes the protocol.
  static absl::StatusOr<std::unique_ptr<Launcher>> Start(
      std::vector<std::string> worker_argv);
  ~Launcher();

  // A new worker's socket.
  absl::StatusOr<UniqueFd> StartWorker();

 private:
  Launcher(pid_t pid, ipc::Channel channel)
      : pid_(pid), channel_(std::move(channel)) {}
  pid_t pid_;
  ipc::Channel channel_;
};

}  // namespace acp
}  // namespace garuda

#endif  // GARUDA_LIB_ACP_LAUNCHER_H_
