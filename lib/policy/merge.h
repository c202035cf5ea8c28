// One effective Settings from the four sources of lib/policy/sources.h.
//
// The rules (spec T7, issue 13): the person's files are the managed policy,
// the user's policy and ~/.garuda/settings.json; a project's
// .garuda/settings.json can only narrow what they allow for every setting
// that bounds a command, and each of its settings left out for that is a
// notice for the first line.
//   - profile and requireSandbox: the strictest source wins. "strict" from
//     any source makes the result strict; a project can turn strict on and
//     never off ("profile": "default" in a project does not undo a policy's
//     strict). requireSandbox true from any source stays true.
//   - A strict result implies requireSandbox.
//   - commands.mode: the first of the person's files that sets it (default
//     "direct"); a project may make it "staged", never "direct".
//   - Network: the first of the person's files that sets it decides (off by
//     default); a project may turn it off, never on.
//   - Denied paths: the union of all sources (more denials are stricter).
//   - Writable paths: the union of the person's files; a project's are
//     ignored (they could only widen), and one outside the project is an
//     error, as before.
//   - Sandbox limits (memory, processes, CPU, wall time, file size, /tmp
//     and /dev/shm): each the smallest value of the person's files, else
//     the default of policies/sandbox/defaults.json (processes, /tmp and
//     /dev/shm have one, so the person may raise those); a project may
//     lower a limit, never raise it.
//   - commands.backend: the first source that sets it.
//   - Audit settings: only from policy files.
//   - The allow list of hosts (sandbox.allowedDomains, deniedDomains,
//     allowedPorts): lib/policy/network_merge.h.
//   - permissions, model, knowledge and budget are not merged here yet.
// A value that is not allowed ("profile": "strickt") is an error naming the
// file and the field.
#ifndef GARUDA_LIB_POLICY_MERGE_H_
#define GARUDA_LIB_POLICY_MERGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/policy/network_merge.h"
#include "lib/policy/sources.h"
#include "proto/settings.pb.h"

namespace garuda {

struct MergedSettings {
  Settings settings;  // profile is "default" or "strict"; require_sandbox set
  // The file that made the profile strict (empty when not strict), for the
  // message a person reads ("strict, from /etc/garuda/policy.json").
  std::string strict_source;
  // The file that required the sandbox, when one did (a strict one counts).
  std::string require_sandbox_source;
  // The policy file (managed or the user's) that turned the network off for
  // commands, when one did: then no flag may turn it on again.
  std::string network_off_policy_source;
  // Off, the allow list through the proxy, or all of it; and the policy
  // file whose list bounds it (then no flag may give all of it).
  NetworkAccess network_access = NetworkAccess::kOff;
  std::string allow_list_policy_source;
  // The merged denied hosts and ports even when commands have no allow
  // list (lib/policy/network_merge.h), for an MCP server's own list.
  std::vector<std::string> network_denied_domains;
  std::vector<uint32_t> network_ports;

  // A project's settings that were left out because they would widen what
  // a command may do, each naming the file, the setting and why, for the
  // first line of garuda-agent and garuda-stager.
  std::vector<std::string> notices;

  bool strict() const { return settings.profile() == "strict"; }
  bool require_sandbox() const { return settings.require_sandbox(); }
};

absl::StatusOr<MergedSettings> MergeSettings(const SettingsSources& sources);

// The stricter of two limits where 0 means "no limit": the smaller non-zero.
inline uint64_t StricterLimit(uint64_t a, uint64_t b) {
  return a != 0 && (b == 0 || a < b) ? a : b;
}

}  // namespace garuda

#endif  // GARUDA_LIB_POLICY_MERGE_H_
