#include "lib/agent/mcp_session.h"

#include <unistd.h>

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/agent/mcp_launch.h"
#include "lib/base/status_macros.h"
#include "lib/base/version.h"
#include "lib/policy/mcp_servers.h"
#include "lib/policy/sources.h"

namespace garuda {
namespace agent {
namespace {

// One line from `fd` (the terminal, still in its cooked mode before the
// session's own line editor starts).
std::string ReadAnswer(int fd) {
  std::string line;
  char c;
  while (::read(fd, &c, 1) == 1 && c != '\n') {
    if (line.size() < 64) line.push_back(c);
  }
  return std::string(absl::StripAsciiWhitespace(line));
}

// The approval question for a project's server: what it would run, so the
// person judges the definition itself.
McpApprover TerminalApprover(int in_fd, int out_fd) {
  return [in_fd, out_fd](const McpServer& server, bool changed) {
    const McpServerSettings& d = server.definition();
    std::string what =
        d.url().empty()
            ? absl::StrCat(d.command(), d.args_size() > 0 ? " " : "",
                           absl::StrJoin(d.args(), " "))
            : d.url();
    std::string question = absl::StrCat(
        "garuda-agent: the project defines the MCP server \"", server.name(),
        "\" (", server.source_file(), "): ", what, "\n",
        changed ? "Its definition changed since you approved it. " : "",
        "It would run in the session's sandbox. Start it for this project? "
        "[y/N] ");
    if (::write(out_fd, question.data(), question.size()) < 0) return false;
    std::string answer = absl::AsciiStrToLower(ReadAnswer(in_fd));
    return answer == "y" || answer == "yes";
  };
}

}  // namespace

absl::StatusOr<McpServerPlan> PlanSessionMcp(const AgentOptions& options,
                                             const std::string& project_root,
                                             bool terminal) {
  ASSIGN_OR_RETURN(SettingsSources sources,
                   LoadSettingsSources(DefaultSettingsLocations(project_root)));
  McpPlanOptions plan;
  plan.project = project_root;
  if (terminal) plan.approve = TerminalApprover(options.in_fd, options.err_fd);
  return PlanMcpServers(sources, plan);
}

std::unique_ptr<McpServers> StartSessionMcp(
    const McpServerPlan& plan, CommandService* stager,
    const stager::SessionDescription& description,
    const std::string& project_root, std::vector<std::string>* notices) {
  McpOptions options;
  options.root_dir = project_root;
  options.name_limit = kToolNameLimit;
  options.client_version = kGarudaVersion;
  auto servers = std::make_unique<McpServers>(options);
  for (const std::string& notice : plan.notices) notices->push_back(notice);
  const bool staged = description.mode() == "staged";
  std::vector<McpServerEntry> entries;
  for (const McpServer& server : plan.start) {
    const std::string transport = McpTransport(server.definition());
    if (transport != "stdio" && transport != "http") {
      servers->Skip(server.name(), McpOrigin(server),
                    absl::StrCat("its type \"", transport,
                                 "\" is not one this agent speaks"));
      continue;
    }
    entries.push_back(StagerMcpEntry(server, stager, staged));
  }
  for (const McpSkippedServer& skipped : plan.skipped) {
    servers->Skip(skipped.server.name(), McpOrigin(skipped.server),
                  skipped.why);
  }
  servers->Start(std::move(entries));
  for (std::string& notice : servers->TakeNotices()) {
    notices->push_back(std::move(notice));
  }
  return servers;
}

}  // namespace agent
}  // namespace garuda
