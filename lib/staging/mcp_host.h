// Local MCP servers as garuda-stager runs them (docs/mcp.md): each in the
// OS sandbox of a command of the session, but long-lived. The server is
// RunInSandbox in a supervisor process of its own (forked from the stager,
// so it is sandboxed exactly as a command is: secrets and ~/.garuda hidden,
// the session's limits but the wall time, its own network namespace); its
// stdin and stdout are pipes whose other ends go to the agent, its stderr
// goes through a small pump process into a capped log file.
//
//   direct mode: the project writable as a command's is;
//   staged mode: a staging view of the server's own (the session's view is
//                refreshed before each command, which must never happen
//                under a running process), mounted for the server's life;
//                its writes come back, at each CollectMcpChanges, as the
//                change list of a staged command (StagedView's own steps).
//   writeScope:  narrows either: the project (or the view) read-only but
//                for those entries.
//
// Network: none (its own network namespace), whatever the session's
// commands have; with allowedDomains, a proxy of its own (the session's
// kind, lib/staging/network_start.h) that lets through those hosts only,
// bounded by a policy's allow list, on the session's allowed ports.
//
// Its environment is its definition's env plus PATH, HOME, LANG and TERM:
// never the stager's whole environment (the agent's API keys). Without a
// working OS sandbox no server starts, in any profile (there is no host
// fallback for servers); a server whose program is not visible inside the
// sandbox is refused at once, with why.
#ifndef GARUDA_LIB_STAGING_MCP_HOST_H_
#define GARUDA_LIB_STAGING_MCP_HOST_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/changeset.h"
#include "lib/netproxy/session_proxy.h"
#include "lib/policy/merge.h"
#include "lib/staging/stager_settings.h"
#include "proto/sandbox_policy.pb.h"
#include "proto/settings.pb.h"
#include "proto/stager_service.pb.h"
#include "sandbox/probe.h"

namespace garuda {

class StagedView;

// The bytes of a server's stderr kept in its log; the rest is dropped with
// a line that says so.
inline constexpr uint64_t kMcpStderrCap = 1 << 20;

struct McpHostOptions {
  const MergedSettings* settings = nullptr;
  std::string project;  // real path
  std::string mode;     // "direct" or "staged"
  // The folder of the servers' stderr logs (made 0700 when missing).
  std::string log_folder;
  const ProbeReport* probe = nullptr;
  // The sandbox does not work here: why (no server starts).
  std::optional<SandboxProblem> problem;
  // Staged: the backend of the session's view ("overlay", "copy"), or the
  // reason staged mode cannot work ("" when it can).
  std::string backend;
  std::string staging_error;
  // A job's session: the job's scope over the server's policy too.
  std::function<void(SandboxPolicy*)> narrow;
  uint64_t stderr_cap = kMcpStderrCap;
  // The program started as a server's network proxy (`self proxy`), for a
  // server with allowedDomains.
  std::string self = "/proc/self/exe";
};

// A proxy of a server's own: its allowedDomains (within a policy's allow
// list), the session's denied hosts and allowed ports; attached once, for
// the server's life, to whatever hands it a listener (a stdio server's
// sandbox; for a remote server, the stager itself: mcp_remote.h).
struct McpServerProxy {
  std::unique_ptr<netproxy::SessionProxy> proxy;
  std::unique_ptr<netproxy::SessionProxy::Run> attached;
  // The hosts it lets through, normalized.
  std::vector<std::string> allowed;
  // For /mcp: "network: only a.example, b.example through its proxy".
  std::string network;
};

class McpHost {
 public:
  explicit McpHost(McpHostOptions options);
  ~McpHost();  // stops every server
  McpHost(const McpHost&) = delete;
  McpHost& operator=(const McpHost&) = delete;

  // Starts `server` (stdio only), stopping a running one of that name
  // first. `fds` gets the server's stdin (write end) and stdout (read end).
  absl::Status Start(const McpServer& server, stager::McpServerStarted* reply,
                     std::vector<UniqueFd>* fds);
  // How the server is (running, or how it ended) in `result`'s kind and
  // description; in staged mode what it wrote since its start or the last
  // collection, in `change_set` (the list of a staged command) with the
  // paths that changed in the project meanwhile in `conflicts`. Direct
  // mode: `change_set` stays empty.
  absl::Status Collect(const std::string& name, stager::CommandResult* result,
                       std::optional<ChangeSet>* change_set, int* conflicts);
  absl::Status Stop(const std::string& name, stager::McpServerStopped* reply);
  void StopAll();

  // The proxy of `server` (which has allowedDomains), started and attached;
  // FAILED_PRECONDITION naming the server when it cannot be.
  absl::StatusOr<McpServerProxy> StartProxy(const McpServer& server) const;
  // "MCP server "NAME" (FILE) is not started: WHY".
  absl::Status Refused(const McpServer& server, absl::string_view why) const;

 private:
  struct Running;
  absl::StatusOr<SandboxPolicy> PolicyFor(const McpServer& server,
                                          Running* running);
  // The settings of the server's own proxy: its allowedDomains as the allow
  // list, within a policy's; the session's denied hosts and ports.
  absl::StatusOr<MergedSettings> NetworkOf(const McpServer& server) const;

  McpHostOptions options_;
  std::map<std::string, std::unique_ptr<Running>> running_;
};

// The server's program as the sandbox would find it (its PATH, the working
// folder for a relative path with a '/'), resolved on the host, and
// whether the sandbox shows it: inside the project or beneath one of the
// policy's read-only system paths. NOT_FOUND or FAILED_PRECONDITION with
// why otherwise.
absl::StatusOr<std::string> VisibleProgram(const SandboxPolicy& policy,
                                           const std::string& command,
                                           const std::string& directory);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_MCP_HOST_H_
