#include "cmd/garuda-agent/acp.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/acp/front.h"
#include "lib/acp/launcher.h"
#include "lib/acp/session_worker.h"
#include "lib/agent/agent.h"
#include "lib/agent/agent_lockdown.h"
#include "lib/lockdown/roles.h"

namespace garuda {
namespace agent_cli {
namespace {

// The flags an ACP front passes on to each session worker.
agent::AgentOptions AcpAgent(const CommandLine& line) {
  agent::AgentOptions agent;
  agent.overrides = line.session.overrides;
  agent.helpers_dir = line.session.helpers_dir;
  agent.accept_weaker_lockdown = line.session.accept_weaker_lockdown;
  return agent;
}

// The worker's command line: this program, `acp-session`, and the flags
// passed on (model, helpers' folder, weaker lockdown).
absl::StatusOr<std::vector<std::string>> WorkerArgv(
    const agent::AgentOptions& agent) {
  absl::StatusOr<std::string> self = agent::OwnProgramFolder();
  if (!self.ok()) return self.status();
  std::vector<std::string> argv = {*self + "/garuda-agent", "acp-session",
                                   "--channel_fd=3"};
  for (const auto& [flag, value] :
       {std::pair{"provider", agent.overrides.provider},
        {"model", agent.overrides.model},
        {"base_url", agent.overrides.base_url},
        {"helpers_dir", agent.helpers_dir},
        {"accept_weaker_lockdown", agent.accept_weaker_lockdown}}) {
    if (!value.empty()) argv.push_back(absl::StrCat("--", flag, "=", value));
  }
  return argv;
}

}  // namespace

int AcpFront(const CommandLine& line, const std::vector<std::string>&) {
  const agent::AgentOptions agent = AcpAgent(line);
  // Open: the launcher, forked before the lockdown; it starts every worker
  // and stays unconfined for that (lib/acp/launcher.h).
  absl::StatusOr<std::vector<std::string>> argv = WorkerArgv(agent);
  absl::StatusOr<std::unique_ptr<acp::Launcher>> launcher =
      argv.ok() ? acp::Launcher::Start(*argv) : argv.status();
  // Lock down: from here the front only relays lines between the
  // descriptors it holds; no file writes, no network, no new process.
  absl::StatusOr<LockdownReport> locked =
      launcher.ok()
          ? LockDownAs(Role::kAcpFront, {},
                       {agent.accept_weaker_lockdown, acp::LogFront})
          : launcher.status();
  if (!locked.ok()) {
    acp::LogFront(locked.status().message());
    return 1;
  }
  acp::LogFront(locked->summary);
  // Serve the editor.
  acp::Launcher& workers = **launcher;
  const acp::FrontOptions editor;  // standard input and output
  return acp::ServeFront(editor, [&workers] { return workers.StartWorker(); });
}

int AcpSession(const CommandLine& line, const std::vector<std::string>&) {
  // Open: the request that opens the session, the session in its cwd, the
  // helpers, libcurl (the front has any error as a JSON-RPC error).
  acp::WorkerOptions options;
  options.agent = AcpAgent(line);
  options.channel_fd = line.channel_fd;
  absl::StatusOr<std::unique_ptr<acp::SessionWorker>> worker =
      acp::SessionWorker::Open(options);
  if (!worker.ok()) return 1;
  // Lock down as a terminal session's agent: its session folder, the
  // provider's port.
  absl::StatusOr<RoleNeeds> needs = agent::AgentNeeds((*worker)->Lockdown());
  absl::StatusOr<LockdownReport> locked =
      needs.ok() ? LockDownAs(Role::kAgent, *needs,
                              {options.agent.accept_weaker_lockdown, Say})
                 : needs.status();
  if (!locked.ok()) return (*worker)->Refuse(locked.status());
  // Serve the editor's prompts.
  return (*worker)->Serve(locked->summary);
}

}  // namespace agent_cli
}  // namespace garuda
