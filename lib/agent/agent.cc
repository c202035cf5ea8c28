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
#include "lib/agent/helpers.h"
#include "lib/agent/instructions.h"
#include "lib/agent/journal.h"
#include "lib/agent/piped_input.h"
#include "lib/agent/plain_interaction.h"
#include "lib/agent/session_view.h"
#include "lib/agent/session.h"
#include "lib/agent/session_setup.h"
#include "lib/agent/settings.h"
#include "lib/agent/stream_json.h"
#include "lib/terminal/terminal.h"
#include "lib/audit/verify_cli.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"
#include "lib/knowledge/code_tools_client.h"
#include "lib/policy/sources.h"
#include "lib/provider/http.h"
#include "lib/tools/project.h"

namespace garuda {
namespace agent {
namespace {

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

// The staged change lists `call` kept for review, and those of the child
// agents it ran, in the calls' order.
void AddKeptChanges(const ToolCallReport& call, OneShotReport* report) {
  if (call.has_kept_changes()) {
    *report->add_kept_changes() = call.kept_changes();
  }
  for (const ToolCallReport& child_call : call.child().tool_calls()) {
    AddKeptChanges(child_call, report);
  }
}

// The report of a one-shot run (stream_json.h's ReportJson prints it).
std::string OneShotJson(const std::string& session_id,
                        const TurnOutcome& outcome, int code) {
  OneShotReport report;
  report.set_session_id(session_id);
  report.set_answer(outcome.answer);
  for (const ToolCallReport& call : outcome.tool_calls) {
    *report.add_tool_calls() = call;
    AddKeptChanges(call, &report);
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

}  // namespace

StartedSession::~StartedSession() {
  // Closes its channel and lets it end its language servers.
  if (code_tools != nullptr) code_tools->Stop().IgnoreError();
}

absl::StatusOr<std::unique_ptr<StartedSession>> StartSession(
    const AgentOptions& options, OpenedSession& opened) {
  // A helper that died must be an error on its channel, not a signal.
  ::signal(SIGPIPE, SIG_IGN);
  auto started = std::make_unique<StartedSession>();
  // Before the lockdown: a project's server may need the person's approval.
  ASSIGN_OR_RETURN(
      started->mcp_plan,
      PlanSessionMcp(options, opened.project->root(), opened.terminal));
  ASSIGN_OR_RETURN(started->helpers, StartSessionHelpers(options, opened));
  absl::StatusOr<stager::SessionDescription> description =
      started->helpers->stager().Describe();
  if (!description.ok()) {
    absl::Status alive = started->helpers->CheckAlive();
    started->helpers->Stop().IgnoreError();
    return absl::Status(alive.ok() ? description.status().code() : alive.code(),
                        absl::StrCat("the session did not start: ",
                                     alive.ok() ? description.status().message()
                                                : alive.message()));
  }
  started->description = *std::move(description);
  started->code_tools = StartCodeTools(options, opened);
  // libcurl loads its parts now: the lockdown leaves no way to open them.
  provider::InitializeHttp();
  return started;
}

int EndSession(const AgentOptions& options, StartedSession& started, int code) {
  absl::Status stopped = started.helpers->Stop();
  if (!stopped.ok() && code == kExitAnswered) {
    Printer(options.err_fd).Line(stopped.message());
    code = kExitError;
  }
  if (started.code_tools != nullptr) {
    started.code_tools->Stop().IgnoreError();
    started.code_tools.reset();
  }
  return code;
}

int ServeSession(const AgentOptions& options, OpenedSession& opened,
                 StartedSession& started, const std::string& lockdown_summary) {
  Printer err(options.err_fd);
  Helpers& helpers = *started.helpers;
  const stager::SessionDescription& description = started.description;
  knowledge::CodeService* code_tools = started.code_tools.get();
  CancelFlag cancel;
  g_cancel = &cancel;
  std::unique_ptr<Interaction> interaction;
  std::unique_ptr<LineSource> lines;
  if (opened.terminal) {
    interaction = terminal::MakeTerminalInteraction(
        options.in_fd, options.out_fd, options.plain);
    // It owns SIGINT while it lives: Ctrl-C sets `cancel` during a request.
    lines = terminal::MakeTerminalLineSource(opened.history_path, &cancel);
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

  SessionConfig config =
      SessionConfigFor(opened, description, lockdown_summary);
  SessionParts parts = SessionPartsFor(opened, helpers, code_tools);
  parts.interaction = interaction.get();
  std::unique_ptr<McpServers> mcp =
      StartSessionMcp(started.mcp_plan, parts.stager, description,
                      opened.project->root(), &config.notices);
  parts.mcp = mcp.get();
  std::unique_ptr<StreamJsonWriter> stream;
  if (options.one_shot &&
      options.output == AgentOptions::Output::kStreamJson) {
    stream = std::make_unique<StreamJsonWriter>(options.out_fd);
    parts.events = stream.get();
  }
  if (opened.job) {
    const jobs::JobGuard* job = &*opened.job;
    const int worktree_fd = opened.project->fd();
    parts.check_write = [job, worktree_fd](const std::string& path) {
      return jobs::CheckJobWrite(*job, worktree_fd, path);
    };
    parts.host_refusal = jobs::kJobHostRefusal;
  }
  const bool strict = config.strict;
  absl::StatusOr<std::unique_ptr<Session>> session =
      Session::Start(std::move(config), parts);
  if (!session.ok()) {
    err.Line(session.status().message());
    g_cancel = nullptr;
    return 1;
  }
  (*session)->Restore(std::move(opened.resumed));
  if (!options.one_shot && !(*session)->messages().empty()) {
    // Where the resumed conversation stands, before the first prompt.
    interaction->ShowNotice(absl::StrCat(
        "Resumed; the last exchanges:\n",
        LastExchanges((*session)->messages(), kResumedExchangesShown)));
  }
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
      err.Line(absl::StrCat("standard input was ",
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
  err.Line(absl::StrCat("session ", opened.session_id,
                        "; continue it with: garuda-agent --project ",
                        ShellWord(opened.project->root()), " --resume ",
                        opened.session_id));
  return code;
}

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
    err.Line(absl::StrCat("no sessions of the project ",
                          (*project)->root(), " yet"));
  }
  WriteAll(options.out_fd, out).IgnoreError();
  return kExitAnswered;
}

}  // namespace agent
}  // namespace garuda
