// The first three phases of every kind of session (a terminal or one-shot
// session, an editor's over ACP, an unattended job): open the project, its
// settings, the model client and the journal; start the helper programs
// (before the lockdown, which leaves the agent unable to start any); start
// the code tools; lock down. What is served after them differs, and lives
// with each kind (lib/agent/agent.cc for the terminal and one-shot).
#ifndef GARUDA_LIB_AGENT_SESSION_SETUP_H_
#define GARUDA_LIB_AGENT_SESSION_SETUP_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/agent/agent_lockdown.h"
#include "lib/agent/agent_options.h"
#include "lib/agent/helpers.h"
#include "lib/agent/instructions.h"
#include "lib/agent/journal.h"
#include "lib/agent/session.h"
#include "lib/agent/settings.h"
#include "lib/jobs/job_guard.h"
#include "lib/knowledge/code_tools_client.h"
#include "lib/provider/client.h"
#include "lib/tools/project.h"
#include "proto/provider.pb.h"

namespace garuda {
namespace agent {

// What a session says to a prompt when no model is configured, and how to
// configure one.
extern const char kNoModelHint[];

// What the session opens before anything starts: the project, the
// settings, the model client, the journal (and a resumed conversation).
struct OpenedSession {
  std::unique_ptr<Project> project;
  SessionSettings settings;
  std::unique_ptr<provider::ModelClient> model;  // null: no model
  std::string home;
  std::string session_id;
  std::vector<provider::ChatMessage> resumed;
  std::unique_ptr<Journal> journal;
  // A person at the terminal (not one-shot, standard input a terminal).
  bool terminal = false;
  std::string history_path;  // "" without a terminal
  std::string helpers_dir;   // where the helper programs are
  ProjectInstructions instructions;  // AGENTS.md and the person's own
  // A job's session (AgentOptions::job_file): its scope and rules.
  std::optional<jobs::JobGuard> job;
};

// --project, or the current folder.
absl::StatusOr<std::unique_ptr<Project>> OpenProject(
    const AgentOptions& options);

// Phase 1: open. Every error here is a usage or settings error (exit 2).
absl::StatusOr<OpenedSession> OpenSession(const AgentOptions& options);

// Phase 2: the helpers, before the lockdown (a locked-down agent could not
// start them), without the API key in their environment.
absl::StatusOr<std::unique_ptr<Helpers>> StartSessionHelpers(
    const AgentOptions& options, const OpenedSession& opened);

// Phase 2b: the model's code tools parse the project's sources in a process
// of their own (garuda-agent tool serve, locked down before it reads one),
// started before the agent's lockdown, after which it can start nothing.
// Without it the session goes on without code tools, and says so (a notice
// in opened.settings.notices).
std::unique_ptr<knowledge::CodeToolsHelper> StartCodeTools(
    const AgentOptions& options, OpenedSession& opened);

// Phase 3's paths: what the agent may still write and reach once it is
// locked down (its session folder, the history file, the provider's port),
// and the reason of --accept-weaker-lockdown. A main.cc passes it to
// LockDownAgent (lib/agent/agent_lockdown.h) on its own screen.
AgentLockdown SessionLockdown(const AgentOptions& options,
                              const OpenedSession& opened);

// Phase 3 for sessions whose main.cc branch hands its phases to a library
// (ACP, jobs): libcurl's start, then LockDownAgent(SessionLockdown(...)).
// The summary for the first lines.
absl::StatusOr<std::string> LockDownSession(const AgentOptions& options,
                                            const OpenedSession& opened);

// Phase 4's start, the same for every kind: the session's configuration
// (profile, mode, notices, instructions, the lockdown's summary) and its
// parts (the helpers' clients, the model, the journal). The interaction and
// the turn's events are the caller's.
SessionConfig SessionConfigFor(const OpenedSession& opened,
                               const stager::SessionDescription& description,
                               const std::string& lockdown_summary);
SessionParts SessionPartsFor(OpenedSession& opened, Helpers& helpers,
                             knowledge::CodeService* code_tools);

// `garuda-audit verify` of the project, in-process and read-only: the
// report's text for /audit verify.
std::string VerifyAudit(const std::string& project);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_SESSION_SETUP_H_
