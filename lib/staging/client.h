// The client of the stager's session channel (proto/stager_service.proto),
// beside its server (service.h): what garuda-agent asks of garuda-stager,
// and the interface tests may put their own behind.
#ifndef GARUDA_LIB_STAGING_CLIENT_H_
#define GARUDA_LIB_STAGING_CLIENT_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/changeset.h"
#include "lib/ipc/helper_process.h"
#include "lib/staging/command_watch.h"
#include "proto/settings.pb.h"
#include "proto/stager_service.pb.h"

namespace garuda {

// garuda-stager: runs commands in the session's mode. An on_host command
// runs only when the stager itself agrees (it asks the person or re-checks
// the rules): PERMISSION_DENIED otherwise.
class CommandService {
 public:
  virtual ~CommandService() = default;
  virtual absl::StatusOr<stager::SessionDescription> Describe() = 0;
  struct Ran {
    stager::CommandResult result;
    // Staged mode, when the command changed something: the list as the
    // client read it (to show it), and the stager's sealed memfd, which
    // goes on to the applier unchanged.
    std::optional<ChangeSet> change_set;
    UniqueFd sealed_change_set;
  };
  virtual absl::StatusOr<Ran> Run(const stager::RunCommand& command) = 0;
  // The same, watched (lib/staging/command_watch.h): the start and the
  // output as they come, and the stop once `watch.cancel` is set (the
  // result is then STOPPED). A service that cannot watch runs it plainly.
  virtual absl::StatusOr<Ran> RunWatched(const stager::RunCommand& command,
                                         CommandWatch watch) {
    return Run(command);
  }
  virtual absl::Status End() = 0;

  // A local MCP server started by the stager in the session's sandbox
  // (StartMcpServer in proto/stager_service.proto): its stdin and stdout,
  // and where its stderr goes.
  struct McpServerPipes {
    UniqueFd to_server;    // the server's stdin
    UniqueFd from_server;  // the server's stdout
    stager::McpServerStarted started;
  };
  virtual absl::StatusOr<McpServerPipes> StartMcpServer(
      const McpServer& server) {
    return absl::UnimplementedError(
        "this command service cannot start MCP servers");
  }
  // Staged mode: what server `name` changed since its start or the last
  // call, as a staged command's result (change_set empty when nothing
  // changed), so it goes to the same change question (SettleChangeSet).
  virtual absl::StatusOr<Ran> McpServerChanges(const std::string& name) {
    return absl::UnimplementedError(
        "this command service cannot start MCP servers");
  }
  // A remote MCP server (ConnectMcpProxy): the Unix socket address of its
  // own proxy, where the caller speaks HTTP CONNECT.
  virtual absl::StatusOr<stager::McpProxyConnected> ConnectMcpProxy(
      const McpServer& server) {
    return absl::UnimplementedError(
        "this command service cannot reach remote MCP servers");
  }
  virtual absl::Status StopMcpServer(const std::string& name) {
    return absl::UnimplementedError(
        "this command service cannot start MCP servers");
  }
};

// Over `garuda-stager serve`'s channel (`stager` not owned).
std::unique_ptr<CommandService> StagerChannelClient(ipc::HelperProcess* stager);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_CLIENT_H_
