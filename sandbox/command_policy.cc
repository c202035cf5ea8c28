#include "sandbox/command_policy.h"

#include <stdlib.h>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/rules/sandbox_defaults.h"
#include "sandbox/network_proxy.h"

extern char** environ;

namespace garuda {

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    env.push_back(*entry);
  }
  return env;
}

void ScopeProjectWrites(const std::vector<std::string>& scope,
                        SandboxPolicy* policy) {
  policy->set_project_writable(false);
  for (const std::string& entry : scope) policy->add_scope_paths(entry);
}

void LowerWallTime(uint64_t wall_time_ms, SandboxPolicy* policy) {
  policy->mutable_limits()->set_wall_time_ms(
      StricterLimit(wall_time_ms, policy->limits().wall_time_ms()));
}

absl::StatusOr<SandboxPolicy> DirectCommandPolicy(
    const MergedSettings& settings, const CommandRequest& request) {
  ASSIGN_OR_RETURN(std::string project, RealPath(request.project, "project"));
  const SandboxDefaults& defaults = DefaultSandboxSettings();

  SandboxPolicy policy;
  policy.set_project(project);
  policy.set_project_writable(true);
  policy.set_network(request.network || settings.settings.sandbox().network());
  policy.set_seccomp_role("command");
  // The allow list (docs/network.md): the command's own network namespace
  // with only loopback, where the session's proxy answers on one port.
  if (!policy.network() &&
      settings.network_access == NetworkAccess::kAllowList) {
    policy.mutable_network_proxy()->set_port(kSandboxProxyPort);
    policy.set_seccomp_role("command_proxied");
  }
  policy.set_min_landlock_abi(1);
  for (const std::string& path : defaults.read_only_paths()) {
    policy.add_read_only_paths(path);
  }
  if (policy.network()) {
    for (const std::string& path : defaults.network_paths()) {
      policy.add_read_only_paths(path);
    }
  }
  // Relative paths stay relative: the sandbox opens them beneath the
  // project without following links (sandbox/mount_plan.h).
  auto add_writable = [&](const std::string& path) {
    if (!path.empty()) policy.add_writable_paths(path);
  };
  for (const std::string& path : settings.settings.sandbox().write_paths()) {
    add_writable(path);
  }
  for (const std::string& path : request.write_paths) add_writable(path);
  for (const std::string& path : defaults.denied_paths()) {
    policy.add_denied_paths(path);
  }
  for (const std::string& path : defaults.project_denied_paths()) {
    policy.add_denied_paths(path);
  }
  for (const std::string& path : settings.settings.sandbox().deny_paths()) {
    policy.add_denied_paths(path);
  }
  for (const std::string& path : defaults.deny_private_under()) {
    policy.add_deny_private_under(path);
  }
  for (const std::string& path : defaults.project_pinned_paths()) {
    policy.add_pinned_paths(path);
  }
  for (const std::string& path : defaults.project_read_only_paths()) {
    policy.add_read_only_project_paths(path);
  }

  const SandboxLimits& limits = settings.settings.sandbox().limits();
  constexpr uint64_t kMiB = 1 << 20;
  Limits* policy_limits = policy.mutable_limits();
  policy_limits->set_memory_bytes(limits.memory_mb() * kMiB);
  policy_limits->set_processes(limits.processes());
  policy_limits->set_cpu_seconds(limits.cpu_seconds());
  policy_limits->set_wall_time_ms(uint64_t{limits.wall_time_seconds()} * 1000);
  policy_limits->set_file_size_bytes(limits.file_size_mb() * kMiB);
  policy_limits->set_tmp_bytes(limits.tmp_mb() * kMiB);
  policy_limits->set_shm_bytes(limits.shm_mb() * kMiB);

  const std::string& cwd = request.working_directory;
  if (cwd == project || absl::StartsWith(cwd, absl::StrCat(project, "/"))) {
    policy.set_working_directory(cwd);
  }

  absl::flat_hash_set<std::string> passed(
      defaults.environment_passthrough().begin(),
      defaults.environment_passthrough().end());
  auto& env = *policy.mutable_environment();
  for (const std::string& entry : request.environment) {
    size_t equals = entry.find('=');
    if (equals == std::string::npos) continue;
    std::string name = entry.substr(0, equals);
    if (passed.contains(name)) env[name] = entry.substr(equals + 1);
  }
  for (const auto& [name, value] : defaults.environment_defaults()) {
    if (!env.contains(name)) env[name] = value;
  }
  if (policy.has_network_proxy()) {
    SetProxyEnvironment(policy.network_proxy().port(), &policy);
  }
  return policy;
}

}  // namespace garuda
