#include "lib/agent/session_setup.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/agent/agent_lockdown.h"
#include "lib/audit/verify_cli.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/policy/merge.h"
#include "lib/policy/sources.h"
#include "lib/provider/http.h"

namespace garuda {
namespace agent {

const char kNoModelHint[] =
    "No model configured: prompts cannot be answered, but !command works. "
    "Set one in ~/.garuda/settings.json, e.g. {\"model\": {\"provider\": "
    "\"openai\", \"name\": \"qwen2.5-coder\", \"baseUrl\": "
    "\"http://127.0.0.1:8080/v1\"}} for a local llama.cpp, vLLM or Ollama "
    "server (OPENAI_API_KEY or ANTHROPIC_API_KEY for the hosted services), "
    "or pass --provider, --model and --base-url.";

std::string VerifyAudit(const std::string& project) {
  char* buffer = nullptr;
  size_t size = 0;
  FILE* out = ::open_memstream(&buffer, &size);
  if (out == nullptr) return "audit verify: no memory";
  VerifyCliOptions options;
  options.project = project;
  int code = RunVerify(options, out, out);
  std::fclose(out);
  std::string text(buffer, size);
  std::free(buffer);
  if (text.empty()) text = code == 0 ? "audit: ok" : "audit: failed";
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

namespace {

// A job's session: the job file read here too (its helpers read it
// themselves), its rules added to the settings' and its budget the limit
// when lower. No person answers; a job never has a terminal.
absl::Status OpenJob(const AgentOptions& options, OpenedSession& opened) {
  ASSIGN_OR_RETURN(
      opened.job, jobs::LoadJobGuard(options.job_file, opened.project->root()));
  RETURN_IF_ERROR(jobs::AddJobRules(*opened.job, &opened.settings.permissions));
  if (opened.job->token_budget > 0) {
    const uint64_t settings_limit = static_cast<uint64_t>(
        std::max<int64_t>(0, opened.settings.token_limit));
    opened.settings.token_limit = static_cast<int64_t>(
        StricterLimit(opened.job->token_budget, settings_limit));
  }
  return absl::OkStatus();
}

}  // namespace

// --project, or the current folder.
absl::StatusOr<std::unique_ptr<Project>> OpenProject(
    const AgentOptions& options) {
  std::string project_path = options.project;
  if (project_path.empty()) {
    char cwd[4096];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr) {
      return absl::FailedPreconditionError(
          "cannot read the current folder; pass --project");
    }
    project_path = cwd;
  }
  return Project::Open(project_path);
}

// Phase 1: open. Every error here is a usage or settings error (exit 2).
absl::StatusOr<OpenedSession> OpenSession(const AgentOptions& options) {
  OpenedSession opened;
  ASSIGN_OR_RETURN(opened.project, OpenProject(options));
  const std::string& root = opened.project->root();
  ASSIGN_OR_RETURN(SettingsSources sources,
                   LoadSettingsSources(DefaultSettingsLocations(root)));
  ASSIGN_OR_RETURN(opened.settings, LoadSessionSettings(sources));
  if (!options.job_file.empty()) RETURN_IF_ERROR(OpenJob(options, opened));
  if (provider::ModelConfigured(opened.settings.model, options.overrides)) {
    ASSIGN_OR_RETURN(provider::ClientOptions client_options,
                     provider::ClientOptionsFromSettings(
                         opened.settings.model, options.overrides, ::getenv));
    ASSIGN_OR_RETURN(opened.model,
                     provider::ModelClient::Create(std::move(client_options)));
  }
  if (options.one_shot && opened.model == nullptr) {
    return absl::FailedPreconditionError(kNoModelHint);
  }

  // The journal (opened before the lockdown; the descriptor is kept).
  ASSIGN_OR_RETURN(opened.home, HomeDirectory());
  std::string resume_id = options.resume_id;
  if (options.continue_last) {
    std::vector<SessionSummary> sessions = ListSessions(opened.home, root);
    if (sessions.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("--continue: no earlier session of the project ", root,
                       " (garuda-agent sessions lists them)"));
    }
    resume_id = sessions.back().id;
  }
  opened.session_id = resume_id.empty() ? NewSessionId(absl::Now()) : resume_id;
  if (!resume_id.empty()) {
    ASSIGN_OR_RETURN(std::string path,
                     SessionJournalPath(opened.home, resume_id));
    std::string project;
    ASSIGN_OR_RETURN(opened.resumed, ReadConversation(path, &project));
    // A session's conversation is about its project; continued elsewhere,
    // the model would act on files it never saw under names it believes.
    if (!project.empty() && project != root) {
      return absl::FailedPreconditionError(
          absl::StrCat("session ", resume_id, " belongs to the project ",
                       project, ", not to ", root,
                       " (--project or the current folder); run "
                       "garuda-agent --project ",
                       project, " --resume ", resume_id));
    }
  }
  ASSIGN_OR_RETURN(opened.journal,
                   Journal::Open(opened.home, opened.session_id));
  JournalRecord start;
  start.mutable_start()->set_session_id(opened.session_id);
  start.mutable_start()->set_project(root);
  start.mutable_start()->set_model(
      opened.model != nullptr ? opened.model->Describe() : "");
  start.mutable_start()->set_time(absl::FormatTime(absl::Now()));
  RETURN_IF_ERROR(opened.journal->Append(start));
  opened.helpers_dir = options.helpers_dir;
  if (opened.helpers_dir.empty()) {
    ASSIGN_OR_RETURN(opened.helpers_dir, OwnProgramFolder());
  }
  opened.instructions =
      LoadProjectInstructions(opened.project->root(), opened.home);
  opened.terminal =
      !options.one_shot && !opened.job && ::isatty(options.in_fd) != 0;
  if (opened.terminal) {
    opened.history_path = JoinPath(JoinPath(opened.home, ".garuda"), "history");
  }
  return opened;
}

// Phase 2: the helpers, before the lockdown (a locked-down agent could not
// start them), without the API key in their environment.
absl::StatusOr<std::unique_ptr<Helpers>> StartSessionHelpers(
    const AgentOptions& options, const OpenedSession& opened) {
  provider::RemoveApiKeysFromEnvironment();
  HelpersOptions helper_options;
  helper_options.paths = HelperPathsIn(opened.helpers_dir);
  RETURN_IF_ERROR(CheckHelperPaths(opened.helpers_dir, helper_options.paths));
  helper_options.project = opened.project->root();
  helper_options.session_id = opened.session_id;
  helper_options.token_limit = opened.settings.token_limit;
  helper_options.accept_weaker_lockdown = options.accept_weaker_lockdown;
  // A person at the terminal answers the applier's and the stager's own
  // questions there; with nobody (one-shot, input from a pipe) they go by
  // the rules they read themselves.
  helper_options.consent = !options.consent.empty() ? options.consent
                           : opened.terminal        ? "terminal"
                                                    : "rules";
  // --apply-staged is a rule of the rules mode (nobody to ask).
  helper_options.apply_staged =
      options.apply_staged && helper_options.consent == "rules";
  if (opened.job) {
    helper_options.job_file = opened.job->file;
    helper_options.audit_project = options.audit_project;
    helper_options.command_mode = "direct";
  }
  return Helpers::Start(helper_options);
}

// Phase 2b: the model's code tools parse the project's sources in a process
// of their own (garuda-agent tool serve, locked down before it reads one),
// started before the agent's lockdown, after which it can start nothing.
// Without it the session goes on without code tools, and says so.
std::unique_ptr<knowledge::CodeToolsHelper> StartCodeTools(
    const AgentOptions& options, OpenedSession& opened) {
  char self[4096];
  ssize_t length = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length <= 0) return nullptr;
  knowledge::CodeToolsHelperOptions code_options;
  code_options.program = std::string(self, length);
  code_options.project = opened.project->root();
  code_options.accept_weaker_lockdown = options.accept_weaker_lockdown;
  absl::StatusOr<std::unique_ptr<knowledge::CodeToolsHelper>> started =
      knowledge::CodeToolsHelper::Start(code_options);
  if (!started.ok()) {
    opened.settings.notices.push_back(
        absl::StrCat("no code tools: ", started.status().message()));
    return nullptr;
  }
  return *std::move(started);
}

AgentLockdown SessionLockdown(const AgentOptions& options,
                              const OpenedSession& opened) {
  AgentLockdown lockdown;
  lockdown.session_dir = Dirname(opened.journal->path());
  lockdown.history_path = opened.history_path;
  lockdown.provider_url =
      opened.model != nullptr ? opened.model->options().base_url : "";
  lockdown.accept_weaker_lockdown = options.accept_weaker_lockdown;
  return lockdown;
}

absl::StatusOr<std::string> LockDownSession(const AgentOptions& options,
                                            const OpenedSession& opened) {
  provider::InitializeHttp();
  LockdownReport report;
  RETURN_IF_ERROR(LockDownAgent(SessionLockdown(options, opened), &report));
  return report.summary;
}

SessionConfig SessionConfigFor(const OpenedSession& opened,
                               const stager::SessionDescription& description,
                               const std::string& lockdown_summary) {
  SessionConfig config;
  config.session_id = opened.session_id;
  config.strict =
      opened.settings.merged.strict() || description.profile() == "strict";
  config.strict_source = opened.settings.merged.strict_source;
  config.require_sandbox = opened.settings.merged.require_sandbox();
  config.description = description;
  config.no_model_hint = kNoModelHint;
  config.notices = opened.settings.notices;
  config.instructions_prompt = InstructionsPrompt(opened.instructions);
  config.agents =
      ChildSettingsFrom(opened.settings.agents, opened.settings.model);
  if (std::string line = InstructionsLine(opened.instructions); !line.empty()) {
    config.notices.push_back(absl::StrCat("garuda-agent: ", line));
  }
  if (!lockdown_summary.empty()) {
    config.notices.push_back(absl::StrCat("garuda-agent: ", lockdown_summary));
  }
  return config;
}

SessionParts SessionPartsFor(OpenedSession& opened, Helpers& helpers,
                             knowledge::CodeService* code_tools) {
  const std::string root = opened.project->root();
  SessionParts parts;
  parts.project = opened.project.get();
  parts.permissions = &opened.settings.permissions;
  parts.stager = &helpers.stager();
  parts.applier = &helpers.applier();
  parts.audit = &helpers.audit();
  parts.budget = &helpers.budget();
  parts.code = code_tools;
  parts.model = opened.model.get();
  parts.journal = opened.journal.get();
  parts.check_helpers = [&helpers] { return helpers.CheckAlive(); };
  parts.verify_audit = [root] { return VerifyAudit(root); };
  return parts;
}

}  // namespace agent
}  // namespace garuda
