// What garuda-agent's command line asks for (cmd/garuda-agent/main.cc
// parses the flags into it), and the exit status scripts rely on.
#ifndef GARUDA_LIB_AGENT_AGENT_OPTIONS_H_
#define GARUDA_LIB_AGENT_AGENT_OPTIONS_H_

#include <string>

#include "lib/provider/config.h"

namespace garuda {
namespace agent {

struct AgentOptions {
  std::string project;  // empty: the current folder
  // One-shot: answer this prompt and exit.
  bool one_shot = false;
  std::string prompt;
  // One-shot output: the answer, one JSON report, or JSON lines as the
  // turn goes (--output-format text|json|stream-json).
  enum class Output { kText, kJson, kStreamJson };
  Output output = Output::kText;
  std::string resume_id;     // continue this session
  bool continue_last = false;  // --continue: this project's last session
  provider::ModelOverrides overrides;
  // Where the helper programs are; empty: beside this program.
  std::string helpers_dir;
  std::string accept_weaker_lockdown;
  // One-shot: the applier is started with its own --apply-staged, and
  // applies each staged command's changes without a question (conflict
  // check and refusals as always). Without it they are kept for review.
  bool apply_staged = false;
  int in_fd = 0, out_fd = 1, err_fd = 2;
  // The helpers' --consent; empty: "terminal" with a person at the
  // terminal, else "rules". An editor's session (lib/acp) sets "relayed".
  std::string consent;
  // A job's session (garuda-agent run starts it with --job, lib/jobs): the
  // job file the session and its helpers each read themselves.
  std::string job_file;
  // With job_file: the job's checkout, whose audit log the session's
  // decisions go to (--audit-project); empty: the project's.
  std::string audit_project;
  // --plain: the terminal without colours or formatting (the model's text
  // as written).
  bool plain = false;
};

// The exit status, kept stable for scripts (docs/agent.md "Exit status").
enum ExitCode : int {
  kExitAnswered = 0,   // the session ended normally (one-shot: answered)
  kExitError = 1,      // could not start, a helper died, a provider error
  kExitUsage = 2,      // bad flags or settings, -p without a model
  kExitBudget = 3,     // one-shot: the token budget refused a request
  kExitCancelled = 4,  // one-shot: the turn was cancelled (Ctrl-C)
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_AGENT_OPTIONS_H_
