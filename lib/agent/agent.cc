#include "lib/agent/agent.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "lib/agent/agent_lockdown.h"
#include "lib/agent/helpers.h"
#include "lib/agent/journal.h"
#include "lib/agent/plain_interaction.h"
#include "lib/agent/session.h"
#include "lib/agent/settings.h"
#include "lib/agent/terminal.h"
#include "lib/audit/verify_cli.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
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

}  // namespace

int RunAgent(const AgentOptions& options) {
  Printer err(options.err_fd);
  ::signal(SIGPIPE, SIG_IGN);

  // The project and the settings.
  std::string project_path = options.project;
  if (project_path.empty()) {
    char cwd[4096];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr) {
      err.Line("cannot read the current folder; pass --project");
      return 2;
    }
    project_path = cwd;
  }
  absl::StatusOr<std::unique_ptr<Project>> project =
      Project::Open(project_path);
  if (!project.ok()) {
    err.Line(project.status().message());
    return 2;
  }
  const std::string& root = (*project)->root();
  absl::StatusOr<SettingsSources> sources =
      LoadSettingsSources(DefaultSettingsLocations(root));
  if (!sources.ok()) {
    err.Line(sources.status().message());
    return 2;
  }
  absl::StatusOr<SessionSettings> settings = LoadSessionSettings(*sources);
  if (!settings.ok()) {
    err.Line(settings.status().message());
    return 2;
  }
  std::unique_ptr<provider::ModelClient> model;
  if (provider::ModelConfigured(settings->model, options.overrides)) {
    absl::StatusOr<provider::ClientOptions> client_options =
        provider::ClientOptionsFromSettings(settings->model, options.overrides,
                                            ::getenv);
    if (!client_options.ok()) {
      err.Line(client_options.status().message());
      return 2;
    }
    absl::StatusOr<std::unique_ptr<provider::ModelClient>> client =
        provider::ModelClient::Create(*std::move(client_options));
    if (!client.ok()) {
      err.Line(client.status().message());
      return 2;
    }
    model = *std::move(client);
  }
  if (options.one_shot && model == nullptr) {
    err.Line(kNoModelHint);
    return 2;
  }

  // The journal (opened before the lockdown; the descriptor is kept).
  absl::StatusOr<std::string> home = HomeDirectory();
  if (!home.ok()) {
    err.Line(home.status().message());
    return 2;
  }
  const std::string session_id =
      options.resume_id.empty() ? NewSessionId(absl::Now()) : options.resume_id;
  std::vector<provider::ChatMessage> resumed;
  if (!options.resume_id.empty()) {
    absl::StatusOr<std::string> path =
        SessionJournalPath(*home, options.resume_id);
    absl::StatusOr<std::vector<provider::ChatMessage>> conversation =
        path.ok()
            ? ReadConversation(*path)
            : absl::StatusOr<std::vector<provider::ChatMessage>>(path.status());
    if (!conversation.ok()) {
      err.Line(conversation.status().message());
      return 2;
    }
    resumed = *std::move(conversation);
  }
  absl::StatusOr<std::unique_ptr<Journal>> journal =
      Journal::Open(*home, session_id);
  if (!journal.ok()) {
    err.Line(journal.status().message());
    return 2;
  }
  JournalRecord start;
  start.mutable_start()->set_session_id(session_id);
  start.mutable_start()->set_project(root);
  start.mutable_start()->set_model(model != nullptr ? model->Describe() : "");
  start.mutable_start()->set_time(absl::FormatTime(absl::Now()));
  if (absl::Status written = (*journal)->Append(start); !written.ok()) {
    err.Line(written.message());
    return 2;
  }

  // The helpers, which must not inherit the key.
  provider::RemoveApiKeysFromEnvironment();
  HelpersOptions helper_options;
  std::string helpers_dir = options.helpers_dir;
  if (helpers_dir.empty()) {
    absl::StatusOr<std::string> own = OwnProgramFolder();
    if (!own.ok()) {
      err.Line(own.status().message());
      return 2;
    }
    helpers_dir = *own;
  }
  helper_options.paths = HelperPathsIn(helpers_dir);
  for (const std::string* program :
       {&helper_options.paths.auditor, &helper_options.paths.budgeter,
        &helper_options.paths.stager, &helper_options.paths.applier}) {
    if (::access(program->c_str(), X_OK) != 0) {
      err.Line(absl::StrCat(
          Basename(*program), " is not in ", helpers_dir,
          ": the helper programs are installed beside garuda-agent; name "
          "their folder with --helpers-dir"));
      return 1;
    }
  }
  helper_options.project = root;
  helper_options.session_id = session_id;
  helper_options.token_limit = settings->token_limit;
  helper_options.accept_weaker_lockdown = options.accept_weaker_lockdown;
  absl::StatusOr<std::unique_ptr<Helpers>> helpers =
      Helpers::Start(helper_options);
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

  // The person: the terminal, or plain lines without one.
  CancelFlag cancel;
  g_cancel = &cancel;
  const bool terminal = !options.one_shot && ::isatty(options.in_fd) != 0;
  const std::string history_path =
      terminal ? JoinPath(JoinPath(*home, ".garuda"), "history") : "";

  provider::InitializeHttp();
  std::string lockdown_summary;
  if (options.lock_down) {
    AgentLockdownOptions lockdown;
    lockdown.session_dir = Dirname((*journal)->path());
    lockdown.history_path = history_path;
    lockdown.provider_url = model != nullptr ? model->options().base_url : "";
    if (!options.accept_weaker_lockdown.empty()) {
      lockdown.accept_weaker =
          AcceptWeakerLockdown{options.accept_weaker_lockdown};
    }
    AgentLockdownReport report;
    absl::Status locked = LockDownAgent(lockdown, &report);
    if (!locked.ok()) {
      err.Line(absl::StrCat("the session did not start: lockdown: ",
                            locked.message()));
      return stop(1);
    }
    lockdown_summary = report.summary;
  }

  std::unique_ptr<Interaction> interaction;
  std::unique_ptr<LineSource> lines;
  if (terminal) {
    interaction = MakeTerminalInteraction(options.in_fd, options.out_fd);
    // It owns SIGINT while it lives: Ctrl-C sets `cancel` during a request.
    lines = MakeTerminalLineSource(history_path, &cancel);
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
  config.session_id = session_id;
  config.strict =
      settings->merged.strict() || description->profile() == "strict";
  config.strict_source = settings->merged.strict_source;
  config.require_sandbox = settings->merged.require_sandbox();
  config.description = *description;
  config.no_model_hint = kNoModelHint;
  config.notices = settings->notices;
  if (!lockdown_summary.empty()) {
    config.notices.push_back(absl::StrCat("garuda-agent: ", lockdown_summary));
  }
  SessionParts parts;
  parts.interaction = interaction.get();
  parts.project = project->get();
  parts.permissions = &settings->permissions;
  parts.stager = &(*helpers)->stager();
  parts.applier = &(*helpers)->applier();
  parts.audit = &(*helpers)->audit();
  parts.budget = &(*helpers)->budget();
  parts.model = model.get();
  parts.journal = journal->get();
  Helpers* helpers_ptr = helpers->get();
  parts.check_helpers = [helpers_ptr] { return helpers_ptr->CheckAlive(); };
  parts.verify_audit = [root] { return VerifyAudit(root); };
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Start(std::move(config), parts);
  if (!session.ok()) {
    err.Line(session.status().message());
    return stop(1);
  }
  (*session)->Restore(std::move(resumed));

  int code = 0;
  if (options.one_shot) {
    absl::StatusOr<TurnOutcome> outcome =
        (*session)->RunTurn(options.prompt, &cancel);
    if (!outcome.ok()) {
      err.Line(outcome.status().message());
      g_cancel = nullptr;
      return stop(1);
    }
    if (options.json_output) {
      OneShotReport report;
      report.set_session_id(session_id);
      report.set_answer(outcome->answer);
      for (const ToolCallReport& call : outcome->tool_calls) {
        *report.add_tool_calls() = call;
      }
      *report.mutable_usage() = outcome->usage;
      report.set_stopped(outcome->stopped);
      WriteAll(options.out_fd, MessageToJsonLine(report) + "\n").IgnoreError();
    } else {
      std::string answer = outcome->answer;
      if (!answer.empty() && answer.back() != '\n') answer.push_back('\n');
      WriteAll(options.out_fd, answer).IgnoreError();
    }
    code = outcome->stopped.empty() ? 0 : 1;
  } else {
    absl::Status ran = RunLines(**session, *lines, &cancel);
    if (!ran.ok()) {
      err.Line(ran.message());
      code = 1;
    }
  }
  g_cancel = nullptr;
  if (code == 0 || (*helpers)->CheckAlive().ok()) {
    (*session)->End().IgnoreError();
  }
  return stop(code);
}

}  // namespace agent
}  // namespace garuda
