// A session's MCP servers (docs/mcp.md, "Tools, permissions and
// commands"): each started through a launcher (garuda-stager in its
// sandbox in a session; plainly in tests), connected (lib/mcp/client.h),
// listed, and its tools made rows of the session's table, named
// mcp__<server>__<tool> (cut to the provider's limit with a stable suffix).
//
// A call of such a row: the permission (rules mcp__<server>__<tool> and
// mcp__<server>; no rule asks, whatever the server's hints say), the call
// with the server's time limit and the turn's Ctrl-C, the result capped as
// every tool's, in staged mode the server's changes put to the change
// question as a staged command's, and an "mcp_call" audit event (server,
// tool, SHA-256 of the arguments, outcome, files changed).
//
// A server that fails to start, hangs or sends garbage is reported and the
// session goes on without it. One that stops is restarted once; after a
// second stop its tools answer that it is down.
#ifndef GARUDA_LIB_AGENT_MCP_SERVERS_H_
#define GARUDA_LIB_AGENT_MCP_SERVERS_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/agent/mcp_rows.h"
#include "lib/agent/services.h"
#include "lib/mcp/client.h"
#include "lib/tools/tool_table.h"

namespace garuda {
namespace agent {

class ToolRun;  // lib/agent/tool_run.h

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

class McpServers : public McpRows {
 public:
  explicit McpServers(McpOptions options);
  ~McpServers() override;

  // Starts each server: its launcher, initialize and the first listing
  // within its start_timeout. One that fails is reported (a notice, its
  // state and error in /mcp) and the others go on.
  void Start(std::vector<McpServerEntry> entries);
  // A server that is not started, with why (listed in /mcp).
  void Skip(const std::string& name, const std::string& origin,
            const std::string& why);

  // The lines for the person that arose since the last call: servers
  // started, failed, skipped, restarted.
  std::vector<std::string> TakeNotices();

  // McpRows: the ready servers' tools (after a list_changed, listed again).
  absl::Status AddRows(ToolTable& table) override;
  // /mcp; /mcp restart NAME; /mcp resources NAME; /mcp read NAME URI;
  // /mcp prompts NAME; /mcp prompt NAME PROMPT [ARG=VALUE ...].
  std::string Command(const std::string& arguments) override;

  std::vector<McpServerView> Servers() const;
  // Stops and starts one server again (the person's /mcp restart; it does
  // not count against the one automatic restart).
  absl::Status Restart(const std::string& name);

  absl::StatusOr<std::string> Resources(const std::string& name);
  absl::StatusOr<std::string> ReadResource(const std::string& name,
                                           const std::string& uri);
  absl::StatusOr<std::string> Prompts(const std::string& name);
  absl::StatusOr<std::string> GetPrompt(
      const std::string& name, const std::string& prompt,
      const std::map<std::string, std::string>& arguments);

 private:
  struct Server;
  struct ToolState;

  Server* Find(const std::string& name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The client of a ready server, or why there is none.
  absl::StatusOr<mcp::Client*> ReadyClient(const std::string& name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Launch, Connect, ListTools; the state and error set either way.
  absl::Status Connect(Server& server) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SetTools(Server& server, mcp::ToolList list)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The one automatic restart of a server found stopped; false when it is
  // down now.
  bool RestartAfterStop(Server& server, const absl::Status& why)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  ToolRow RowFor(Server& server, std::shared_ptr<ToolState> tool);
  absl::StatusOr<ToolCallDone> Call(ToolRun& run, Server* server,
                                    std::shared_ptr<ToolState> tool);
  std::string List() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  McpOptions options_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Server>> servers_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> notices_ ABSL_GUARDED_BY(mu_);
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_MCP_SERVERS_H_
