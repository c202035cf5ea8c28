#include "lib/agent_cli/mcp_command.h"

#include <unistd.h>

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/agent/agent.h"
#include "lib/agent/mcp_launch.h"
#include "lib/agent/mcp_session.h"
#include "lib/agent/session_setup.h"
#include "lib/base/files.h"
#include "lib/policy/mcp_servers.h"

namespace garuda {
namespace agent_cli {
namespace {

void Print(const std::string& text) {
  WriteAll(STDOUT_FILENO, absl::StrCat(text, "\n")).IgnoreError();
}

// What the server runs, or where it is.
std::string Target(const McpServerSettings& d) {
  if (!d.url().empty()) return d.url();
  return absl::StrCat(d.command(), d.args_size() > 0 ? " " : "",
                      absl::StrJoin(d.args(), " "));
}

// The session's options for a command that starts no model turn and asks
// nobody: a project server not yet approved is skipped, as with -p.
agent::AgentOptions Options(const CommandLine& line) {
  agent::AgentOptions options = line.session;
  options.one_shot = false;
  options.in_fd = -1;
  return options;
}

int List(const CommandLine& line) {
  agent::AgentOptions options = Options(line);
  absl::StatusOr<std::unique_ptr<Project>> project =
      agent::OpenProject(options);
  if (!project.ok()) return FailUsage(project.status());
  absl::StatusOr<McpServerPlan> plan =
      agent::PlanSessionMcp(options, (*project)->root(), /*terminal=*/false);
  if (!plan.ok()) return FailUsage(plan.status());
  for (const std::string& notice : plan->notices) Say(notice);
  if (plan->start.empty() && plan->skipped.empty()) {
    Print(absl::StrCat("No MCP servers for ", (*project)->root(),
                       " (mcpServers in ~/.garuda/settings.json or the "
                       "project's .mcp.json; docs/mcp.md)."));
    return 0;
  }
  for (const McpServer& server : plan->start) {
    Print(absl::StrCat(server.name(), ": starts (",
                       McpTransport(server.definition()), ") | from ",
                       agent::McpOrigin(server), " | ",
                       Target(server.definition())));
  }
  for (const McpSkippedServer& skipped : plan->skipped) {
    Print(absl::StrCat(skipped.server.name(), ": skipped: ", skipped.why,
                       " | from ", agent::McpOrigin(skipped.server), " | ",
                       Target(skipped.server.definition())));
  }
  return 0;
}

int Check(const CommandLine& line, const std::string& name) {
  agent::AgentOptions options = Options(line);
  absl::StatusOr<agent::OpenedSession> opened = agent::OpenSession(options);
  if (!opened.ok()) return FailUsage(opened.status());
  absl::StatusOr<McpServerPlan> plan = agent::PlanSessionMcp(
      options, opened->project->root(), /*terminal=*/false);
  if (!plan.ok()) return FailUsage(plan.status());
  McpServerPlan one;
  std::vector<std::string> names;
  for (const McpServer& server : plan->start) {
    names.push_back(server.name());
    if (server.name() == name) one.start.push_back(server);
  }
  for (const McpSkippedServer& skipped : plan->skipped) {
    names.push_back(skipped.server.name());
    if (skipped.server.name() == name) {
      Say(absl::StrCat("the MCP server ", name,
                       " is not started: ", skipped.why));
      return 1;
    }
  }
  if (one.start.empty()) {
    return FailUsage(absl::NotFoundError(absl::StrCat(
        "no MCP server named \"", name, "\" for ", opened->project->root(),
        names.empty() ? " (none is configured)"
                      : absl::StrCat(" (the servers: ",
                                     absl::StrJoin(names, ", "), ")"))));
  }
  // Started as a session starts it: by garuda-stager, in its sandbox.
  absl::StatusOr<std::unique_ptr<agent::StartedSession>> started =
      agent::StartSession(options, *opened);
  if (!started.ok()) return Fail(started.status());
  std::vector<std::string> notices;
  std::unique_ptr<agent::McpServers> servers = agent::StartSessionMcp(
      one, &(*started)->helpers->stager(), (*started)->description,
      opened->project->root(), &notices);
  std::vector<agent::McpServerView> views = servers->Servers();
  const bool ready =
      !views.empty() && views[0].state == agent::McpState::kReady;
  Print(servers->Command(""));
  if (ready) {
    Print(absl::StrCat("Permission rules: ", agent::McpServerRule(name),
                       " (every tool), or mcp__", name,
                       "__TOOL; without one, each call asks."));
  }
  servers.reset();  // closes the servers before the stager ends
  return agent::EndSession(options, **started, ready ? 0 : 1);
}

}  // namespace

const char kMcpUsage[] = R"(  garuda-agent mcp list [--project DIR]
      the MCP servers a session in this project starts, and those it skips
      with why (docs/mcp.md)
  garuda-agent mcp check NAME [--project DIR] [--helpers-dir DIR]
      start the server NAME as a session does (garuda-stager, in the
      session's sandbox), list its tools, stop it; exit 1 when it does not
      start
)";

int McpCommand(const CommandLine& line, const std::vector<std::string>& args) {
  if (args.size() == 3 && args[2] == "list") return List(line);
  if (args.size() == 4 && args[2] == "check") return Check(line, args[3]);
  return FailUsage(absl::InvalidArgumentError(
      absl::StrCat("mcp: \"", absl::StrJoin(args.begin() + 2, args.end(), " "),
                   "\" is not a command; use `mcp list` or `mcp check NAME`")));
}

}  // namespace agent_cli
}  // namespace garuda
