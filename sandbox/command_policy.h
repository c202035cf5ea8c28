// The sandbox policy of a command that the person or the agent runs in a
// project, from the merged settings and the request (flags of
// `garuda-stager run`).
#ifndef GARUDA_SANDBOX_COMMAND_POLICY_H_
#define GARUDA_SANDBOX_COMMAND_POLICY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/policy/merge.h"
#include "proto/sandbox_policy.pb.h"

namespace garuda {

struct CommandRequest {
  std::string project;            // the project's root
  std::string working_directory;  // used when inside the project
  bool network = false;           // on when the request or the settings say
  std::vector<std::string> write_paths;  // extra, absolute or project-relative
  // The caller's environment ("NAME=value"); only the variables named in
  // policies/sandbox/defaults.json pass.
  std::vector<std::string> environment;
};

// Direct mode: the project writable, its .git pinned with .git/config and
// .git/info read-only; system folders read-only (the network's own paths,
// such as the DNS resolver's socket folder, only with the network on); the
// extra writable paths of the settings and the request (relative ones
// beneath the project); the denied paths of the defaults (.git/hooks,
// .garuda, /etc/*shadow*..., and what the host keeps private under /etc)
// and of the settings; the limits of the merged settings.
absl::StatusOr<SandboxPolicy> DirectCommandPolicy(
    const MergedSettings& settings, const CommandRequest& request);

// A job's write scope (T6): the project read-only, and only `scope`
// (project-relative folders and files) writable in it, bound after the
// writable paths and before the denied paths.
void ScopeProjectWrites(const std::vector<std::string>& scope,
                        SandboxPolicy* policy);

// Lowers the policy's wall-time limit to `wall_time_ms` (a tool call's
// timeout); never raises it past the settings' limit. 0 changes nothing.
void LowerWallTime(uint64_t wall_time_ms, SandboxPolicy* policy);

// The caller's environment as a list, for CommandRequest::environment.
std::vector<std::string> CurrentEnvironment();

}  // namespace garuda

#endif  // GARUDA_SANDBOX_COMMAND_POLICY_H_
