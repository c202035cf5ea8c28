// The MCP servers of the settings sources (docs/mcp.md, "Configuration"),
// checked and resolved into McpServer messages (proto/settings.proto).
//
//   managed policy, user policy   source POLICY
//   ~/.garuda/settings.json       source USER
//   <project>/.garuda/settings.json, <project>/.mcp.json   source PROJECT
//
// A name defined by several sources keeps the first definition in that
// order (the person's files before the project's), and the later ones are
// notices. A definition that is wrong is an error naming the file, the
// server and the field ("~/.garuda/settings.json: mcpServers.github.url:
// ..."), like every other setting, except in a project's .mcp.json: that
// file is written for other agents too, so one we cannot read skips the
// project's servers with the reason instead of stopping the session.
//
// Whether a project server may start (the person's approval) is
// lib/consent/mcp_approval.h's business.
#ifndef GARUDA_LIB_POLICY_MCP_SERVERS_H_
#define GARUDA_LIB_POLICY_MCP_SERVERS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/policy/sources.h"
#include "proto/settings.pb.h"

namespace garuda {

// The start and first listing when the definition says 0.
inline constexpr uint32_t kDefaultMcpStartTimeoutMs = 30000;

// <project>/.mcp.json.
std::string ProjectMcpJsonFile(absl::string_view project);

// A server's name goes into tool names (mcp__NAME__tool) and log file
// names: 1 to 64 of [A-Za-z0-9_-]. The error says the rule.
absl::Status CheckMcpServerName(absl::string_view name);

// One definition: the transport's fields present and the other's absent,
// a stdio command, an https URL (http only to a loopback address), env
// names, a cwd inside the project, the writeScope entries (as a job's), the
// allowedDomains entries. INVALID_ARGUMENT as "mcpServers.NAME.FIELD: why"
// (the caller puts the file in front).
absl::Status CheckMcpServerDefinition(absl::string_view name,
                                      const McpServerSettings& definition);

// The host of an http:// or https:// url, lower case, without port,
// brackets or user info; INVALID_ARGUMENT when there is none.
absl::StatusOr<std::string> UrlHost(const std::string& url);

// "stdio" or "http", from the type or, without one, the fields (a command
// makes it stdio).
std::string McpTransport(const McpServerSettings& definition);

// See McpServer.definition_sha256.
std::string McpDefinitionSha256(absl::string_view name,
                                const McpServerSettings& definition);

struct McpServerSources {
  // In start order: the person's (policy, then user), then the project's.
  std::vector<McpServer> servers;
  // The project's .mcp.json could not be read: why (its servers are not in
  // `servers`); empty otherwise.
  std::string project_file_problem;
  // Names defined twice, a project's mcp.projectServers, ... for the
  // session's first lines.
  std::vector<std::string> notices;
  // The person's files forbid project servers (mcp.projectServers false):
  // the file that said so; empty when they do not.
  std::string project_servers_forbidden_by;
};

// The servers of `sources`, and of `project`'s .mcp.json when `project` is
// not empty (read without following a link, as the project's settings).
absl::StatusOr<McpServerSources> CollectMcpServers(
    const SettingsSources& sources, const std::string& project);

}  // namespace garuda

#endif  // GARUDA_LIB_POLICY_MCP_SERVERS_H_
