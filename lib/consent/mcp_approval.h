// Which MCP servers a session starts (docs/mcp.md): the person's own
// (settings and policy files) always; a project's (its .mcp.json or
// .garuda/settings.json) only once the person approved that server for that
// project. An approval records the definition's SHA-256, in
// ~/.garuda/approvals/<project key>/mcp.json, so that a project that changes
// a server's command, arguments or environment asks again. With nobody to
// ask (-p, jobs, an editor that does not answer) an unapproved project
// server is skipped, and so is every project server when the person's files
// say "mcp": {"projectServers": false}.
//
// The approval is asked and written by the agent before it locks itself
// down (the question is about what the agent will ask the stager to start;
// the stager starts a server in the same sandbox as any command of the
// session, so a server the agent starts without an approval gains nothing
// a command could not).
#ifndef GARUDA_LIB_CONSENT_MCP_APPROVAL_H_
#define GARUDA_LIB_CONSENT_MCP_APPROVAL_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/policy/sources.h"
#include "proto/settings.pb.h"

namespace garuda {

// The question for one project server; true approves it. `changed`: the
// person approved an earlier definition of that name for this project.
using McpApprover = std::function<bool(const McpServer& server, bool changed)>;

struct McpSkippedServer {
  McpServer server;
  // For the person and the session's report: "a project server not yet
  // approved for this project, and nobody to ask".
  std::string why;
};

struct McpServerPlan {
  std::vector<McpServer> start;  // in start order
  std::vector<McpSkippedServer> skipped;
  // Names defined twice, an unreadable .mcp.json, an approval that could not
  // be recorded: for the session's first lines.
  std::vector<std::string> notices;
};

struct McpPlanOptions {
  std::string project;  // the project's real path (RealProjectRoot)
  std::string home;     // empty: HomeDirectory()
  // Empty: nobody to ask.
  McpApprover approve;
};

absl::StatusOr<McpServerPlan> PlanMcpServers(const SettingsSources& sources,
                                             const McpPlanOptions& options);

// ~/.garuda/approvals/<ProjectKey>/mcp.json.
std::string McpApprovalsFile(const std::string& home,
                             const std::string& project);
// The approvals of `project`; none when the file is missing.
absl::StatusOr<McpApprovals> ReadMcpApprovals(const std::string& home,
                                              const std::string& project);
// Records `server`'s definition as approved for `project` (the file
// replaced whole, 0600, its folders 0700).
absl::Status RecordMcpApproval(const std::string& home,
                               const std::string& project,
                               const McpServer& server);

}  // namespace garuda

#endif  // GARUDA_LIB_CONSENT_MCP_APPROVAL_H_
