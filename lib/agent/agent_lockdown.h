// garuda-agent's own lockdown (lib/lockdown with the agent's choices): after
// it the agent cannot write the project, ~/.garuda/audit or anything else
// but its session folder, the history file, /dev/tty and /dev/null; it
// cannot start a program (no execve, no fork: threads only), trace, mount or
// make namespaces; and its only TCP is a connection to the model provider's
// port (Landlock ABI 4, Linux 6.7; below, any TCP connect stays possible and
// the report says so). Without a model, no IP socket at all. See
// docs/agent.md, "The agent's lockdown".
#ifndef GARUDA_LIB_AGENT_AGENT_LOCKDOWN_H_
#define GARUDA_LIB_AGENT_AGENT_LOCKDOWN_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/lockdown/lockdown.h"
#include "lib/lockdown/roles.h"

namespace garuda {
namespace agent {

struct AgentLockdown {
  // --accept-weaker-lockdown WHY; `log` is told the weaker line.
  std::string accept_weaker_lockdown;
  std::function<void(const std::string& line)> log;
  // ~/.garuda/sessions/<id> (absolute; created 0700 when missing): the
  // journal.
  std::string session_dir;
  // The terminal's history file (absolute; created 0600 when missing); ""
  // for none.
  std::string history_path;
  // The model provider's base URL ("http://127.0.0.1:8080/v1",
  // "https://api.openai.com/v1"); "" when no model is configured: then the
  // agent keeps no network at all (AF_UNIX only).
  std::string provider_url;
  // The environment, for the proxy variables libcurl reads (https_proxy,
  // HTTPS_PROXY, http_proxy, ALL_PROXY...): a proxy's port is the one the
  // agent connects to. Null: the process's own (getenv).
  std::function<const char*(const char*)> getenv;
};

// What the agent may still write and reach after its lockdown, for
// LockDownAs(Role::kAgent, ...): the session folder (made 0700), the
// history file (made 0600), and the provider's TCP ports (none without a
// model). An error names a relative path or a URL that is not http(s).
absl::StatusOr<RoleNeeds> AgentNeeds(const AgentLockdown& what);

// The same lockdown in the shape lib/acp's session worker takes (its
// main.cc hands it over). Call once, after the helpers are started and
// provider::InitializeHttp() ran, while the process has a single thread.
// Irreversible. `report` (may be null) has the TCP ports the agent may still
// connect to (none without a model), whether the kernel holds it to them
// (Landlock ABI 4+), and the summary for the session's first lines: "agent
// locked down (Landlock ABI 6, seccomp; TCP only to port 443)".
absl::Status LockDownAgent(const AgentLockdown& what, LockdownReport* report);

namespace agent_lockdown_internal {
// LockDownAgent with lib/lockdown's Landlock ABI probe replaced, so a test
// can act out a kernel without Landlock.
absl::Status LockDownAgentWithProbe(
    const AgentLockdown& what, LockdownReport* report,
    const lockdown_internal::LandlockAbiProbe& probe);
}  // namespace agent_lockdown_internal

// The ports `provider_url` makes libcurl connect to: the URL's (80 for
// http, 443 for https, unless given) or, when a proxy variable applies to
// it, the proxy's (1080 for a socks proxy without one). An error names a URL
// that is not http(s).
absl::StatusOr<std::vector<int>> ProviderTcpPorts(
    const std::string& provider_url,
    const std::function<const char*(const char*)>& getenv);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_AGENT_LOCKDOWN_H_
