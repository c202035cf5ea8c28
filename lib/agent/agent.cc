#include "lib/agent/agent.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "lib/agent/agent_lockdown.h"
#include "lib/agent/helpers.h"
#include "lib/agent/instructions.h"
#include "lib/agent/journal.h"
#include "lib/agent/piped_input.h"
#include "lib/agent/plain_interaction.h"
#include "lib/agent/session.h"
#include "lib/agent/settings.h"
#include "lib/agent/stream_json.h"
#include "lib/agent/terminal.h"
#include "lib/audit/verify_cli.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"
#include "lib/knowledge/code_tools_client.h"
#include "lib/policy/sources.h"
#include "lib/tools/project.h"

namespace garuda {
namespace agent {
namespace {

constexpr char kNoModelHint[] =
    "No model configured: prompts cannot be answered, but !command works. "
    "Set one in ~/.garuda/settings.json, e.g. {\"model\": {\"provider\": "
    "\"openai\", \"name\": \"qwen2.5-coder\", \"baseUrl\": "
    "\"http://127.0.0.1:8080/v1\"}} for a local llama.cpp, vLLM or Ollama "
    "server (OPENAI_API_KEY or ANTHROPIC_API_KEY for the hosted services), "
    "or pass --provider, --model and --base-url.";

CancelFlag* g_cancel = nullptr;

// First Ctrl-C: cancel the request in flight. Second, before the session
// reset the flag: leave (the default action).
void OnInterrupt(int) {
  if (g_cancel == nullptr) return;
  if (g_cancel->cancelled()) {
    ::signal(SIGINT, SIG_DFL);
    ::raise(SIGINT);
    return;
  }
  g_cancel->Cancel();
}

class Printer {
 public:
  explicit Printer(int fd) : fd_(fd) {}
  void Line(absl::string_view text) {
    WriteAll(fd_, absl::StrCat("garuda-agent: ", text, "\n")).IgnoreError();
  }

 private:
  int fd_;
};

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
};

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
      return absl::FailedPreconditionError(absl::StrCat(
          "--continue: no earlier session of the project ", root,
          " (garuda-agent sessions lists them)"));
    }
    resume_id = sessions.back().id;
  }
  opened.session_id =
      resume_id.empty() ? NewSessionId(absl::Now()) : resume_id;
  if (!resume_id.empty()) {
    ASSIGN_OR_RETURN(std::string path,
                     SessionJournalPath(opened.home, resume_id));
    std::string project;
    ASSIGN_OR_RETURN(opened.resumed, ReadConversation(path, &project));
    // A session's conversation is about its project; continued elsewhere,
    // the model would act on files it never saw under names it believes.
    if (!project.empty() && project != root) {
      return absl::FailedPreconditionError(absl::StrCat(
          "session ", resume_id, " belongs to the project ", project,
          ", not to ", root, " (--project or the current folder); run "
          "garuda-agent --project ", project, " --resume ", resume_id));
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
  opened.terminal = !options.one_shot && ::isatty(options.in_fd) != 0;
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
  for (const std::string* program :
       {&helper_options.paths.auditor, &helper_options.paths.budgeter,
        &helper_options.paths.stager, &helper_options.paths.applier}) {
    if (::access(program->c_str(), X_OK) != 0) {
      return absl::NotFoundError(absl::StrCat(
          Basename(*program), " is not in ", opened.helpers_dir,
          ": the helper programs are installed beside garuda-agent; name "
          "their folder with --helpers-dir"));
    }
  }
  helper_options.project = opened.project->root();
  helper_options.session_id = opened.session_id;
  helper_options.token_limit = opened.settings.token_limit;
  helper_options.accept_weaker_lockdown = options.accept_weaker_lockdown;
  // A person at the terminal answers the applier's and the stager's own
  // questions there; with nobody (one-shot, input from a pipe) they go by
  // the rules they read themselves.
  helper_options.consent = opened.terminal ? "terminal" : "rules";
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

// Phase 3: lock down (after libcurl is loaded). The summary for the first
// lines; "" when the lockdown is off (tests).
absl::StatusOr<std::string> LockDownSession(const AgentOptions& options,
                                            const OpenedSession& opened) {
  provider::InitializeHttp();
  if (!options.lock_down) return std::string();
  AgentLockdownOptions lockdown;
  lockdown.session_dir = Dirname(opened.journal->path());
  lockdown.history_path = opened.history_path;
  lockdown.provider_url =
      opened.model != nullptr ? opened.model->options().base_url : "";
  if (!options.accept_weaker_lockdown.empty()) {
    lockdown.accept_weaker =
        AcceptWeakerLockdown{options.accept_weaker_lockdown};
  }
  AgentLockdownReport report;
  absl::Status locked = LockDownAgent(lockdown, &report);
  if (!locked.ok()) {
    return absl::Status(locked.code(),
                        absl::StrCat("lockdown: ", locked.message()));
  }
  return report.summary;
}

int OneShotExitCode(TurnEnd end) {
  switch (end) {
    case TurnEnd::kAnswered:
      return kExitAnswered;
    case TurnEnd::kBudget:
      return kExitBudget;
    case TurnEnd::kCancelled:
      return kExitCancelled;
    case TurnEnd::kFailed:
      break;
  }
  return kExitError;
}

// `word` as the shell reads it back: as is when plain, else single-quoted.
std::string ShellWord(const std::string& word) {
  const bool plain = !word.empty() &&
                     word.find_first_not_of(
                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                         "0123456789_./+-:@%=,") == std::string::npos;
  if (plain) return word;
  return absl::StrCat("'", absl::StrReplaceAll(word, {{"'", "'\\''"}}), "'");
}

// The report of a one-shot run (stream_json.h's ReportJson prints it).
std::string OneShotJson(const std::string& session_id,
                        const TurnOutcome& outcome, int code) {
  OneShotReport report;
  report.set_session_id(session_id);
  report.set_answer(outcome.answer);
  for (const ToolCallReport& call : outcome.tool_calls) {
    *report.add_tool_calls() = call;
  }
  *report.mutable_usage() = outcome.usage;
  report.set_stopped(outcome.stopped);
  report.set_is_error(code != kExitAnswered);
  report.set_exit_code(static_cast<uint32_t>(code));
  report.set_duration_ms(static_cast<uint32_t>(std::min<int64_t>(
      absl::ToInt64Milliseconds(outcome.duration),
      std::numeric_limits<uint32_t>::max())));
  return ReportJson(report);
}

// Phase 4: serve the person: one turn (one-shot) or every line. The exit
// status.
int ServeSession(const AgentOptions& options, OpenedSession& opened,
                 Helpers& helpers,
                 const stager::SessionDescription& description,
                 const std::string& lockdown_summary,
                 knowledge::CodeService* code_tools, Printer& err) {
  CancelFlag cancel;
  g_cancel = &cancel;
  std::unique_ptr<Interaction> interaction;
  std::unique_ptr<LineSource> lines;
  if (opened.terminal) {
    interaction = MakeTerminalInteraction(options.in_fd, options.out_fd);
    // It owns SIGINT while it lives: Ctrl-C sets `cancel` during a request.
    lines = MakeTerminalLineSource(opened.history_path, &cancel);
  } else {
    struct sigaction action = {};
    action.sa_handler = OnInterrupt;
    ::sigaction(SIGINT, &action, nullptr);
    PlainOutput output;
    output.text_fd = options.one_shot ? -1 : options.out_fd;
    output.notice_fd = options.err_fd;
    interaction = MakePlainInteraction(output);
    lines = MakeFdLineSource(options.in_fd);
  }

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
  if (std::string line = InstructionsLine(opened.instructions); !line.empty()) {
    config.notices.push_back(absl::StrCat("garuda-agent: ", line));
  }
  if (!lockdown_summary.empty()) {
    config.notices.push_back(absl::StrCat("garuda-agent: ", lockdown_summary));
  }
  const std::string root = opened.project->root();
  SessionParts parts;
  parts.interaction = interaction.get();
  parts.project = opened.project.get();
  parts.permissions = &opened.settings.permissions;
  parts.stager = &helpers.stager();
  parts.applier = &helpers.applier();
  parts.audit = &helpers.audit();
  parts.budget = &helpers.budget();
  parts.code = code_tools;
  parts.model = opened.model.get();
  parts.journal = opened.journal.get();
  std::unique_ptr<StreamJsonWriter> stream;
  if (options.one_shot &&
      options.output == AgentOptions::Output::kStreamJson) {
    stream = std::make_unique<StreamJsonWriter>(options.out_fd);
    parts.events = stream.get();
  }
  parts.check_helpers = [&helpers] { return helpers.CheckAlive(); };
  parts.verify_audit = [root] { return VerifyAudit(root); };
  const bool strict = config.strict;
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Start(std::move(config), parts);
  if (!session.ok()) {
    err.Line(session.status().message());
    g_cancel = nullptr;
    return 1;
  }
  (*session)->Restore(std::move(opened.resumed));
  if (stream != nullptr) {
    stream->Session(
        opened.session_id,
        opened.model != nullptr ? opened.model->Describe() : "",
        description.mode().empty() ? "direct" : description.mode(),
        strict ? "strict" : "default");
  }

  int code = 0;
  if (options.one_shot) {
    // Read only now: an error in settings or helpers is reported without
    // waiting for the writer of the pipe to finish.
    absl::StatusOr<PipedPrompt> prompt =
        AddPipedInput(options.in_fd, options.prompt);
    if (!prompt.ok()) {
      err.Line(prompt.status().message());
      g_cancel = nullptr;
      return kExitError;
    }
    if (prompt->left_out_bytes > 0) {
      err.Line(absl::StrCat("garuda-agent: standard input was ",
                            prompt->input_bytes, " bytes; the model gets the "
                            "first ", kPipedInputCap, " (",
                            prompt->left_out_bytes, " left out)"));
    }
    absl::StatusOr<TurnOutcome> outcome =
        (*session)->RunTurn(prompt->prompt, &cancel);
    if (!outcome.ok()) {
      err.Line(outcome.status().message());
      g_cancel = nullptr;
      return 1;
    }
    code = OneShotExitCode(outcome->end);
    if (stream != nullptr) {
      stream->Result(OneShotJson(opened.session_id, *outcome, code));
    } else if (options.output == AgentOptions::Output::kJson) {
      WriteAll(options.out_fd,
               OneShotJson(opened.session_id, *outcome, code) + "\n")
          .IgnoreError();
    } else {
      std::string answer = outcome->answer;
      if (!answer.empty() && answer.back() != '\n') answer.push_back('\n');
      WriteAll(options.out_fd, answer).IgnoreError();
    }
  } else {
    absl::Status ran = RunLines(**session, *lines, &cancel);
    if (!ran.ok()) {
      err.Line(ran.message());
      code = 1;
    }
  }
  g_cancel = nullptr;
  if (code == 0 || helpers.CheckAlive().ok()) {
    (*session)->End().IgnoreError();
  }
  // How to come back: the journal keeps the conversation (--resume).
  err.Line(absl::StrCat("garuda-agent: session ", opened.session_id,
                        "; continue it with: garuda-agent --project ",
                        ShellWord(opened.project->root()), " --resume ",
                        opened.session_id));
  return code;
}

}  // namespace

int ListSessionsCommand(const AgentOptions& options) {
  Printer err(options.err_fd);
  absl::StatusOr<std::unique_ptr<Project>> project = OpenProject(options);
  absl::StatusOr<std::string> home = HomeDirectory();
  if (!project.ok() || !home.ok()) {
    err.Line(!project.ok() ? project.status().message()
                           : home.status().message());
    return kExitUsage;
  }
  std::string out;
  for (const SessionSummary& session :
       ListSessions(*home, (*project)->root())) {
    absl::StrAppend(&out, session.id, "  ", session.start, "  ",
                    session.turns, session.turns == 1 ? " turn  " : " turns  ",
                    session.first_prompt, "\n");
  }
  if (out.empty()) {
    err.Line(absl::StrCat("garuda-agent: no sessions of the project ",
                          (*project)->root(), " yet"));
  }
  WriteAll(options.out_fd, out).IgnoreError();
  return kExitAnswered;
}

// The skeleton of every Garuda program: options (parsed by main.cc), open,
// start the helpers, lock down, serve; then stop the helpers in order.
int RunAgent(const AgentOptions& options) {
  Printer err(options.err_fd);
  ::signal(SIGPIPE, SIG_IGN);

  // 1. Open the project, settings, model client and journal.
  absl::StatusOr<OpenedSession> opened = OpenSession(options);
  if (!opened.ok()) {
    err.Line(opened.status().message());
    return 2;
  }
  // 2. Start the helpers.
  absl::StatusOr<std::unique_ptr<Helpers>> helpers =
      StartSessionHelpers(options, *opened);
  if (!helpers.ok()) {
    err.Line(helpers.status().message());
    return 1;
  }
  auto stop = [&](int code) {
    absl::Status stopped = (*helpers)->Stop();
    if (!stopped.ok() && code == 0) {
      err.Line(stopped.message());
      code = 1;
    }
    return code;
  };
  absl::StatusOr<stager::SessionDescription> description =
      (*helpers)->stager().Describe();
  if (!description.ok()) {
    absl::Status alive = (*helpers)->CheckAlive();
    err.Line(absl::StrCat(
        "the session did not start: ",
        alive.ok() ? description.status().message() : alive.message()));
    return stop(1);
  }
  std::unique_ptr<knowledge::CodeToolsHelper> code_tools =
      StartCodeTools(options, *opened);
  // At every return: close its channel and let it end its language servers.
  struct StopCodeTools {
    std::unique_ptr<knowledge::CodeToolsHelper>& helper;
    ~StopCodeTools() {
      if (helper != nullptr) helper->Stop().IgnoreError();
    }
  } stop_code_tools{code_tools};
  // 3. Lock down.
  absl::StatusOr<std::string> lockdown = LockDownSession(options, *opened);
  if (!lockdown.ok()) {
    err.Line(absl::StrCat("the session did not start: ",
                          lockdown.status().message()));
    return stop(1);
  }
  // 4. Serve.
  return stop(
      ServeSession(options, *opened, **helpers, *description, *lockdown,
                   code_tools.get(), err));
}

}  // namespace agent
}  // namespace garuda
