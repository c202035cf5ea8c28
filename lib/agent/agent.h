// garuda-agent's session from start to end: settings, the helpers, the
// model client, the lockdown, the person (the terminal when standard input
// is one, else plain lines and "no" to every question), the session loop
// (interactive or one-shot), and the orderly stop. cmd/garuda-agent/main.cc
// parses flags into AgentOptions and calls RunAgent.
#ifndef GARUDA_LIB_AGENT_AGENT_H_
#define GARUDA_LIB_AGENT_AGENT_H_

#include <string>

#include "lib/agent/agent_options.h"

namespace garuda {
namespace agent {

// Runs the session; returns an ExitCode.
int RunAgent(const AgentOptions& options);

// `garuda-agent sessions`: this project's sessions, one a line: id, start,
// turns, first prompt; oldest first.
int ListSessionsCommand(const AgentOptions& options);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_AGENT_H_
