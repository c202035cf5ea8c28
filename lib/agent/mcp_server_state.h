// The parts of a session's MCP servers (lib/agent/mcp_servers.h) that its
// lifecycle (McpServers), its tool rows (lib/agent/mcp_tools.h) and its
// `/mcp` command (lib/agent/mcp_commands.h) share: how a server is
// defined, seen and held.
#ifndef GARUDA_LIB_AGENT_MCP_SERVER_STATE_H_
#define GARUDA_LIB_AGENT_MCP_SERVER_STATE_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/agent/services.h"
#include "lib/mcp/client.h"

namespace garuda {
namespace agent {

// A server's process as a launcher started it.
struct McpStarted {
  std::unique_ptr<mcp::Transport> transport;
  // How it is confined, as the launcher says ("" keeps the entry's).
  std::string sandbox;
};

// One server as the session reaches it.
struct McpServerEntry {
  std::string name;
  // Where it was defined, for /mcp and messages ("~/.garuda/settings.json",
  // "the editor (ACP)").
  std::string origin;
  // How it runs, for /mcp ("sandbox (staged view, network: none)").
  std::string sandbox;
  absl::Duration start_timeout = absl::Seconds(30);
  absl::Duration call_timeout = absl::Minutes(5);
  // Starts the server's process and gives its channel. Called again for
  // the one restart.
  std::function<absl::StatusOr<McpStarted>()> start;
  // Staged mode: what the server changed since its last call, as a staged
  // command's result (no change_set: nothing). Empty in direct mode.
  std::function<absl::StatusOr<CommandService::Ran>()> changes;
};

struct McpOptions {
  // Offered to the servers as their only root.
  std::string root_dir;
  // The provider's longest tool name.
  size_t name_limit = 64;
  std::string client_version;
};

enum class McpState {
  kReady,    // connected, its tools offered
  kFailed,   // did not start (or its restart failed): not offered
  kDown,     // stopped after its one restart: its tools answer so
  kSkipped,  // not started (an unapproved project server, ...)
};
const char* McpStateName(McpState state);

struct McpToolView {
  std::string model_name;  // mcp__<server>__<tool>, as the model sees it
  std::string tool;        // as the server names it
  std::string rule;        // the permission rule that names it
  bool read_only_hint = false;
  bool offered = false;
};

struct McpServerView {
  std::string name;
  std::string origin;
  std::string sandbox;
  McpState state = McpState::kFailed;
  std::string last_error;
  int restarts = 0;
  std::string server;    // "<name> <version>" as the server says
  std::string protocol;  // the negotiated revision
  std::vector<McpToolView> tools;
  // Tools dropped (an invalid schema, a clash of names, ...).
  std::vector<std::string> problems;
};

// The rule of one tool, and of every tool of a server, as a person writes
// them: "mcp__" and the names with each character outside [A-Za-z0-9_-]
// made '_' (never cut: a rule is not bound by a provider's limit).
std::string McpToolRule(absl::string_view server, absl::string_view tool);
std::string McpServerRule(absl::string_view server);

// One tool of a server as the session holds it. Only McpServers and its
// parts use it.
struct McpToolState {
  std::string model_name;
  std::string rule;
  std::string server_rule;
  mcp::Tool tool;  // as last listed (under the servers' mutex)
  // Read by the table without the servers' mutex (another agent's call may
  // hold it for minutes).
  std::atomic<bool> listed{false};
  std::atomic<bool> offered{false};
  absl::Mutex schema_mu;
  std::string schema ABSL_GUARDED_BY(schema_mu);
};

// One server as the session holds it, under the servers' mutex. Only
// McpServers and its parts use it.
struct McpServerState {
  McpServerEntry entry;
  McpState state = McpState::kFailed;
  std::string last_error;
  int restarts = 0;  // automatic ones
  std::unique_ptr<mcp::Client> client;
  // By model name; kept across listings so that rows stay attached.
  std::map<std::string, std::shared_ptr<McpToolState>> tools;
  std::vector<std::string> problems;

  // Each tool offered when the server is ready and lists it.
  void SetOffered();
};

// "30 s", for messages.
std::string McpSeconds(absl::Duration d);

using McpServerList = std::vector<std::unique_ptr<McpServerState>>;

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_MCP_SERVER_STATE_H_
