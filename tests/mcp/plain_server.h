// A server from tests/mcp/node_modules started plainly, as any other agent
// starts one (no sandbox): what tests/mcp and bench/mcp measure against.
#ifndef GARUDA_TESTS_MCP_PLAIN_SERVER_H_
#define GARUDA_TESTS_MCP_PLAIN_SERVER_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"

namespace garuda {
namespace mcp {

// A started server: its stdin and stdout for StdioTransport; ended (SIGKILL)
// and waited for by the destructor.
class PlainServer {
 public:
  PlainServer() = default;
  PlainServer(PlainServer&& other) noexcept;
  PlainServer& operator=(PlainServer&& other) noexcept;
  ~PlainServer();

  // argv[0] is looked up on PATH; stderr goes to `stderr_path`; `env`
  // ("NAME=value") is added to this process's environment.
  static absl::StatusOr<PlainServer> Start(
      const std::vector<std::string>& argv, const std::string& stderr_path,
      const std::vector<std::string>& env = {});

  // Kills and waits for the server (if started).
  void Stop();

  UniqueFd to_server;
  UniqueFd from_server;
  pid_t pid = -1;
};

// The path of a pinned npm server's entry point, from the runfiles of a
// test or, for a bench run from the work tree, from `root` (the work tree).
// `package` e.g. "server-everything".
std::string PinnedServerScript(const std::string& package,
                               const std::string& root = "");

// argv for node to run `script` from a runfiles tree (symlinked files).
std::vector<std::string> NodeArgv(const std::string& script,
                                  const std::vector<std::string>& args);

}  // namespace mcp
}  // namespace garuda

#endif  // GARUDA_TESTS_MCP_PLAIN_SERVER_H_
