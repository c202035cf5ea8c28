// What a session takes from the settings sources (lib/policy): the merged
// profile and command mode, the permission rules, the model and the token
// limit.
#ifndef GARUDA_LIB_AGENT_SETTINGS_H_
#define GARUDA_LIB_AGENT_SETTINGS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/permissions/permissions.h"
#include "lib/policy/merge.h"
#include "lib/policy/sources.h"
#include "proto/settings.pb.h"

namespace garuda {
namespace agent {

// A session's token limit when no source sets budget.tokenBudget.
inline constexpr int64_t kDefaultTokenBudget = 2000000;

struct SessionSettings {
  MergedSettings merged;
  Permissions permissions;
  // Per field, the first source that sets it: managed policy, user policy,
  // user settings, then the project (name and maxTokens only).
  ModelSettings model;
  int64_t token_limit = kDefaultTokenBudget;
  // agents.*, each field from the first source that sets it (managed
  // policy first); model.contextWindow is in `model`.
  AgentSettings agents;
  // For the first line: project allow rules left out, a project that tried
  // to choose the model's provider or address.
  std::vector<std::string> notices;
};

// The MCP servers of the settings files are checked here too, so that a
// mistake in one stops the session before anything starts, naming the
// file, the server and the field (lib/policy/mcp_servers.h); which of them
// start is lib/consent/mcp_approval.h's PlanMcpServers.
//
// A project's settings may not choose model.provider or model.baseUrl: the
// API key from the environment goes wherever they point, and a cloned
// project must not be able to send it elsewhere. They are left out with a
// notice.
absl::StatusOr<SessionSettings> LoadSessionSettings(
    const SettingsSources& sources);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_SETTINGS_H_
