// garuda-agent's two ACP rows (`acp`, `acp-session`), each reading open ->
// LockDownAs -> serve on its own screen, beside main.cc.
#ifndef GARUDA_CMD_GARUDA_AGENT_ACP_H_
#define GARUDA_CMD_GARUDA_AGENT_ACP_H_

#include <string>
#include <vector>

#include "lib/agent_cli/subcommands.h"

namespace garuda {
namespace agent_cli {

// `acp`: the editor's front (lib/acp/front.h).
int AcpFront(const CommandLine& line, const std::vector<std::string>& args);
// `acp-session`: one editor session's worker (lib/acp/session_worker.h).
int AcpSession(const CommandLine& line, const std::vector<std::string>& args);

}  // namespace agent_cli
}  // namespace garuda

#endif  // GARUDA_CMD_GARUDA_AGENT_ACP_H_
