// The network settings of commands across the four sources (issue 21,
// docs/network.md): sandbox.network, sandbox.allowedDomains,
// sandbox.deniedDomains and sandbox.allowedPorts.
//
// Three levels, from the strictest: off, the allow list (through the
// session's proxy), all of it (sandbox.network true).
//   - The person's files (policies, ~/.garuda/settings.json): `network` as
//     lib/policy/merge.h merges it (the first that sets it); an explicit
//     false there is off whatever list a file sets (each such list is named
//     in a notice). Otherwise a list in any of them makes the level the
//     allow list, even over a `network: true` (the strictest wins), and the
//     lists of several files bound each other: a host must be allowed by
//     each (their intersection).
//   - A project: `network: false` is off; its list narrows the person's
//     (the full network becomes its list; an entry the person's lists do not
//     cover is left out with a notice); with the network off its list is
//     left out with a notice.
//   - deniedDomains: the union of every source (deny wins at the proxy).
//   - allowedPorts: the intersection of the files that set it (80 and 443
//     when none does); a project's port outside it is left out, with a
//     notice.
//   - One file with `network: true` and an allow list is an error: it would
//     say two things.
#ifndef GARUDA_LIB_POLICY_NETWORK_MERGE_H_
#define GARUDA_LIB_POLICY_NETWORK_MERGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/policy/sources.h"
#include "proto/settings.pb.h"

namespace garuda {

enum class NetworkAccess { kOff, kAllowList, kFull };

struct MergedNetwork {
  NetworkAccess access = NetworkAccess::kOff;
  // The policy file whose allow list bounds the result, when one does: then
  // no flag may give a command all of the network.
  std::string allow_list_policy_source;
  std::vector<std::string> notices;
  // The denied hosts and the ports as merged, whatever the access: what an
  // MCP server's own allow list (lib/staging/mcp_host.h) goes with.
  std::vector<std::string> denied_domains;
  std::vector<uint32_t> ports;
};

// `person_network` is the person's `network` as merge.cc found it (unset:
// no file of theirs said), `network_on` the merged result after the
// project. Writes the lists (normalized) and `network` into `sandbox`.
absl::StatusOr<MergedNetwork> MergeNetwork(const SettingsSources& sources,
                                           std::optional<bool> person_network,
                                           bool network_on,
                                           SandboxSettings* sandbox);

}  // namespace garuda

#endif  // GARUDA_LIB_POLICY_NETWORK_MERGE_H_
