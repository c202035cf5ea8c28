#include "tests/mcp/plain_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"

namespace garuda {
namespace mcp {

PlainServer::PlainServer(PlainServer&& other) noexcept
    : to_server(std::move(other.to_server)),
      from_server(std::move(other.from_server)),
      pid(std::exchange(other.pid, -1)) {}

PlainServer& PlainServer::operator=(PlainServer&& other) noexcept {
  if (this != &other) {
    Stop();
    to_server = std::move(other.to_server);
    from_server = std::move(other.from_server);
    pid = std::exchange(other.pid, -1);
  }
  return *this;
}

PlainServer::~PlainServer() { Stop(); }

void PlainServer::Stop() {
  to_server.Reset();
  from_server.Reset();
  if (pid > 0) {
    ::kill(pid, SIGKILL);
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
  }
}

absl::StatusOr<PlainServer> PlainServer::Start(
    const std::vector<std::string>& argv, const std::string& stderr_path,
    const std::vector<std::string>& env) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return LastErrnoStatus("pipe2");
  if (::pipe2(out, O_CLOEXEC) != 0) return LastErrnoStatus("pipe2");
  int err = ::open(stderr_path.c_str(),
                   O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (err < 0) return LastErrnoStatus(absl::StrCat("open(", stderr_path, ")"));
  std::vector<char*> args;
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  std::vector<char*> environment;
  for (char** name = environ; *name != nullptr; ++name) {
    environment.push_back(*name);
  }
  for (const std::string& entry : env) {
    environment.push_back(const_cast<char*>(entry.c_str()));
  }
  environment.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) return LastErrnoStatus("fork");
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err, 2);
    ::execvpe(args[0], args.data(), environment.data());
    _exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err);
  PlainServer server;
  server.pid = pid;
  server.to_server.Reset(in[1]);
  server.from_server.Reset(out[0]);
  return server;
}

std::string PinnedServerScript(const std::string& package,
                               const std::string& root) {
  std::string base = root;
  if (base.empty()) {
    const char* srcdir = std::getenv("TEST_SRCDIR");
    const char* workspace = std::getenv("TEST_WORKSPACE");
    base = absl::StrCat(srcdir != nullptr ? srcdir : ".", "/",
                        workspace != nullptr ? workspace : "garuda");
  }
  return absl::StrCat(base, "/tests/mcp/node_modules/@modelcontextprotocol/",
                      package, "/dist/index.js");
}

std::vector<std::string> NodeArgv(const std::string& script,
                                  const std::vector<std::string>& args) {
  // The runfiles are symlinks: without these, node resolves each module
  // from where the link points and finds no node_modules beside it.
  std::vector<std::string> argv = {"node", "--preserve-symlinks",
                                   "--preserve-symlinks-main", script};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace mcp
}  // namespace garuda
