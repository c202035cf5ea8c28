#include "lib/staging/client.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/ipc/client.h"

namespace garuda {
namespace {

class StagerChannel : public CommandService {
 public:
  explicit StagerChannel(ipc::HelperProcess* process)
      : client_(process, "garuda-stager") {}

  absl::StatusOr<stager::SessionDescription> Describe() override {
    stager::StagerRequest request;
    request.mutable_describe();
    ASSIGN_OR_RETURN(stager::StagerReply reply, client_.Call(request));
    if (!reply.has_description()) {
      return absl::DataLossError("garuda-stager: no SessionDescription reply");
    }
    return reply.description();
  }

  absl::StatusOr<Ran> Run(const stager::RunCommand& command) override {
    stager::StagerRequest request;
    *request.mutable_run() = command;
    request.mutable_run()->set_watched(false);
    std::vector<UniqueFd> fds;
    ASSIGN_OR_RETURN(stager::StagerReply reply, client_.Call(request, &fds));
    return TakeResult(std::move(reply), fds);
  }

  absl::StatusOr<Ran> RunWatched(const stager::RunCommand& command,
                                 CommandWatch watch) override {
    ASSIGN_OR_RETURN(std::unique_ptr<CommandWatcher> watcher,
                     CommandWatcher::Start(std::move(watch)));
    stager::StagerRequest request;
    *request.mutable_run() = command;
    request.mutable_run()->set_watched(true);
    std::vector<UniqueFd> fds;
    const int watch_fd = watcher->peer_fd();
    absl::StatusOr<stager::StagerReply> reply =
        client_.Call(request, &fds, absl::MakeConstSpan(&watch_fd, 1));
    watcher.reset();  // the thread ends before the caller goes on
    if (!reply.ok()) return reply.status();
    return TakeResult(*std::move(reply), fds);
  }

 private:
  absl::StatusOr<Ran> TakeResult(stager::StagerReply reply,
                                 std::vector<UniqueFd>& fds) {
    if (!reply.has_result()) {
      return absl::DataLossError("garuda-stager: no CommandResult reply");
    }
    Ran ran;
    ran.result = reply.result();
    if (ran.result.has_change_set()) {
      if (fds.size() != 1) {
        return absl::DataLossError(
            absl::StrCat("garuda-stager: a change list came with ", fds.size(),
                         " descriptors instead of 1"));
      }
      // Read to be shown only; the memfd itself goes on to the applier,
      // which reads it again from its start.
      ASSIGN_OR_RETURN(
          ChangeSet change_set,
          ReadChangeSet(fds[0].get(), "garuda-stager's change list"));
      ran.change_set = std::move(change_set);
      ran.sealed_change_set = std::move(fds[0]);
    }
    return ran;
  }

 public:
  absl::Status End() override {
    stager::StagerRequest request;
    request.mutable_end();
    return client_.Call(request).status();
  }

  absl::StatusOr<McpServerPipes> StartMcpServer(
      const McpServer& server) override {
    stager::StagerRequest request;
    *request.mutable_start_mcp_server()->mutable_server() = server;
    std::vector<UniqueFd> fds;
    ASSIGN_OR_RETURN(stager::StagerReply reply, client_.Call(request, &fds));
    if (!reply.has_mcp_server_started()) {
      return absl::DataLossError("garuda-stager: no McpServerStarted reply");
    }
    if (fds.size() != 2) {
      return absl::DataLossError(absl::StrCat(
          "garuda-stager: MCP server \"", server.name(), "\" came with ",
          fds.size(), " descriptors instead of 2 (its stdin and stdout)"));
    }
    McpServerPipes pipes;
    pipes.to_server = std::move(fds[0]);
    pipes.from_server = std::move(fds[1]);
    pipes.started = reply.mcp_server_started();
    return pipes;
  }

  absl::StatusOr<Ran> McpServerChanges(const std::string& name) override {
    stager::StagerRequest request;
    request.mutable_collect_mcp_changes()->set_name(name);
    std::vector<UniqueFd> fds;
    ASSIGN_OR_RETURN(stager::StagerReply reply, client_.Call(request, &fds));
    return TakeResult(std::move(reply), fds);
  }

  absl::StatusOr<stager::McpProxyConnected> ConnectMcpProxy(
      const McpServer& server) override {
    stager::StagerRequest request;
    *request.mutable_connect_mcp_proxy()->mutable_server() = server;
    ASSIGN_OR_RETURN(stager::StagerReply reply, client_.Call(request));
    if (!reply.has_mcp_proxy_connected() ||
        reply.mcp_proxy_connected().address().empty()) {
      return absl::DataLossError(absl::StrCat(
          "garuda-stager: no McpProxyConnected reply with an address for MCP "
          "server \"",
          server.name(), "\""));
    }
    return reply.mcp_proxy_connected();
  }

  absl::Status StopMcpServer(const std::string& name) override {
    stager::StagerRequest request;
    request.mutable_stop_mcp_server()->set_name(name);
    ASSIGN_OR_RETURN(stager::StagerReply reply, client_.Call(request));
    if (!reply.has_mcp_server_stopped()) {
      return absl::DataLossError("garuda-stager: no McpServerStopped reply");
    }
    return absl::OkStatus();
  }

 private:
  ipc::Client<stager::StagerRequest, stager::StagerReply> client_;
};

}  // namespace

std::unique_ptr<CommandService> StagerChannelClient(
    ipc::HelperProcess* stager) {
  return std::make_unique<StagerChannel>(stager);
}

}  // namespace garuda
