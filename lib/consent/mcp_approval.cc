#include "lib/consent/mcp_approval.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"
#include "lib/policy/mcp_servers.h"

namespace garuda {
namespace {

// Nobody to ask, or the person said no this time.
constexpr char kNobodyToAsk[] =
    "a project server not yet approved for this project, and nobody to ask "
    "(start garuda-agent in a terminal once to approve it)";
constexpr char kChangedNobodyToAsk[] =
    "its definition changed since it was approved for this project, and "
    "nobody to ask (start garuda-agent in a terminal once to approve it "
    "again)";
constexpr char kDeclined[] = "you did not approve it for this project";

}  // namespace

std::string McpApprovalsFile(const std::string& home,
                             const std::string& project) {
  return JoinPath(
      JoinPath(JoinPath(GarudaFolder(home), "approvals"), ProjectKey(project)),
      "mcp.json");
}

absl::StatusOr<McpApprovals> ReadMcpApprovals(const std::string& home,
                                              const std::string& project) {
  McpApprovals approvals;
  absl::Status read =
      ReadJsonMessageFile(McpApprovalsFile(home, project), &approvals);
  if (absl::IsNotFound(read)) return McpApprovals();
  RETURN_IF_ERROR(read);
  return approvals;
}

absl::Status RecordMcpApproval(const std::string& home,
                               const std::string& project,
                               const McpServer& server) {
  ASSIGN_OR_RETURN(McpApprovals approvals, ReadMcpApprovals(home, project));
  (*approvals.mutable_approved())[server.name()] = server.definition_sha256();
  const std::string path = McpApprovalsFile(home, project);
  RETURN_IF_ERROR(MakeDirectories(Dirname(path), 0700));
  return WriteFileAtomically(path, MessageToJsonLine(approvals) + "\n", 0600);
}

absl::StatusOr<McpServerPlan> PlanMcpServers(const SettingsSources& sources,
                                             const McpPlanOptions& options) {
  ASSIGN_OR_RETURN(McpServerSources collected,
                   CollectMcpServers(sources, options.project));
  McpServerPlan plan;
  plan.notices = std::move(collected.notices);
  std::string home = options.home;
  if (home.empty()) {
    ASSIGN_OR_RETURN(home, HomeDirectory());
  }
  McpApprovals approvals;
  bool approvals_read = false;
  for (McpServer& server : collected.servers) {
    if (server.source() != McpServer::PROJECT) {
      plan.start.push_back(std::move(server));
      continue;
    }
    if (!collected.project_servers_forbidden_by.empty()) {
      plan.skipped.push_back(
          {std::move(server),
           absl::StrCat("project servers are turned off by "
                        "\"mcp\": {\"projectServers\": false} in ",
                        collected.project_servers_forbidden_by)});
      continue;
    }
    if (!approvals_read) {
      // An unreadable approvals file approves nothing: it is asked again.
      absl::StatusOr<McpApprovals> read =
          ReadMcpApprovals(home, options.project);
      if (read.ok()) {
        approvals = *std::move(read);
      } else {
        plan.notices.push_back(
            absl::StrCat("MCP approvals of this project are asked again: ",
                         read.status().message()));
      }
      approvals_read = true;
    }
    auto approved = approvals.approved().find(server.name());
    const bool known = approved != approvals.approved().end();
    if (known && approved->second == server.definition_sha256()) {
      plan.start.push_back(std::move(server));
      continue;
    }
    if (!options.approve) {
      plan.skipped.push_back(
          {std::move(server), known ? kChangedNobodyToAsk : kNobodyToAsk});
      continue;
    }
    if (!options.approve(server, known)) {
      plan.skipped.push_back({std::move(server), kDeclined});
      continue;
    }
    absl::Status recorded = RecordMcpApproval(home, options.project, server);
    if (!recorded.ok()) {
      plan.notices.push_back(
          absl::StrCat("the approval of MCP server \"", server.name(),
                       "\" is for this session only: ", recorded.message()));
    }
    plan.start.push_back(std::move(server));
  }
  return plan;
}

}  // namespace garuda
