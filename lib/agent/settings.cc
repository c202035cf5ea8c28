#include "lib/agent/settings.h"

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/policy/mcp_servers.h"

namespace garuda {
namespace agent {

absl::StatusOr<SessionSettings> LoadSessionSettings(
    const SettingsSources& sources) {
  SessionSettings result;
  ASSIGN_OR_RETURN(result.merged, MergeSettings(sources));
  ASSIGN_OR_RETURN(LoadedPermissions loaded, LoadPermissions(sources));
  result.permissions = std::move(loaded.permissions);
  result.notices = std::move(loaded.notices);
  // Project settings that would have widened a command's bounds (issue 13).
  for (const std::string& notice : result.merged.notices) {
    result.notices.push_back(notice);
  }
  // Without the project's .mcp.json: a file written for other agents too
  // is read, and its problems said, when the servers are planned.
  ASSIGN_OR_RETURN(McpServerSources mcp, CollectMcpServers(sources, ""));
  for (std::string& notice : mcp.notices) {
    result.notices.push_back(std::move(notice));
  }

  const Settings* trusted[] = {&sources.managed_policy, &sources.user_policy,
                               &sources.user_settings};
  ModelSettings& model = result.model;
  for (const Settings* source : trusted) {
    const ModelSettings& m = source->model();
    if (model.provider().empty()) model.set_provider(m.provider());
    if (model.name().empty()) model.set_name(m.name());
    if (model.base_url().empty()) model.set_base_url(m.base_url());
    if (model.max_tokens() == 0) model.set_max_tokens(m.max_tokens());
    if (model.context_window() == 0) {
      model.set_context_window(m.context_window());
    }
  }
  const ModelSettings& project = sources.project_settings.model();
  if (model.name().empty()) model.set_name(project.name());
  if (model.max_tokens() == 0) model.set_max_tokens(project.max_tokens());
  if (model.context_window() == 0) {
    model.set_context_window(project.context_window());
  }
  if (!project.provider().empty() || !project.base_url().empty()) {
    result.notices.push_back(absl::StrCat(
        sources.project_settings_path,
        ": model.provider and model.baseUrl are ignored in a project's "
        "settings (your API key would go where they point); set them in "
        "~/.garuda/settings.json or with --provider and --base-url"));
  }

  for (const Settings* source :
       {&sources.managed_policy, &sources.user_policy, &sources.user_settings,
        &sources.project_settings}) {
    if (source->budget().token_budget() != 0) {
      result.token_limit =
          static_cast<int64_t>(source->budget().token_budget());
      break;
    }
  }
  AgentSettings& agents = result.agents;
  for (const Settings* source :
       {&sources.managed_policy, &sources.user_policy, &sources.user_settings,
        &sources.project_settings}) {
    const AgentSettings& a = source->agents();
    if (agents.max_depth() == 0) agents.set_max_depth(a.max_depth());
    if (agents.max_parallel() == 0) agents.set_max_parallel(a.max_parallel());
    if (agents.child_token_budget() == 0) {
      agents.set_child_token_budget(a.child_token_budget());
    }
  }
  return result;
}

}  // namespace agent
}  // namespace garuda
