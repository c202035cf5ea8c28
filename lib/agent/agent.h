// garuda-agent's session from start to end: settings, the helpers, the
// model client, the lockdown, the session loop (interactive or one-shot),
// and the orderly stop. cmd/garuda-agent/main.cc parses flags into
// AgentOptions and calls RunAgent.
#ifndef GARUDA_LIB_AGENT_AGENT_H_
#define GARUDA_LIB_AGENT_AGENT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "lib/agent/helpers.h"
#include "lib/agent/interaction.h"
#include "lib/provider/config.h"
#include "lib/provider/http.h"

namespace garuda {
namespace agent {

struct AgentOptions {
  std::string project;  // empty: the current folder
  // One-shot: answer this prompt and exit.
  bool one_shot = false;
  std::string prompt;
  bool json_output = false;  // one-shot: --output-format json
  std::string resume_id;     // continue this session
  provider::ModelOverrides overrides;
  // Where the helper programs are; empty: beside this program.
  std::string helpers_dir;
  std::string accept_weaker_lockdown;
  int in_fd = 0, out_fd = 1, err_fd = 2;

  // Called after the helpers started and HTTP was initialized, before the
  // first model request or tool call: the agent's own lockdown.
  std::function<absl::Status(const std::string& project,
                             const std::string& session_id)>
      lock_down;
  // The terminal's Interaction and LineSource when standard input is a
  // terminal (lib/agent/terminal.h); when unset, or without a terminal, the
  // plain ones (no questions: every answer is no).
  std::function<std::unique_ptr<Interaction>(int in_fd, int out_fd)>
      make_terminal_interaction;
  std::function<std::unique_ptr<LineSource>(const std::string& history_path,
                                            provider::CancelFlag* cancel)>
      make_terminal_lines;
};

// The exit status: 0 the session ended normally (one-shot: the model
// finished), 1 it could not start or stopped (strict without a sandbox, a
// dead helper, a turn that ended early in one-shot mode), 2 bad settings or
// flags.
int RunAgent(const AgentOptions& options);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_AGENT_H_
