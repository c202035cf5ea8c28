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
#include "lib/agent/session.h"
#include "lib/agent/session_setup.h"
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

  SessionConfig config =
      SessionConfigFor(opened, description, lockdown_summary);
  SessionParts parts = SessionPartsFor(opened, helpers, code_tools);
  parts.interaction = interaction.get();
  std::unique_ptr<StreamJsonWriter> stream;
  if (options.one_shot &&
      options.output == AgentOptions::Output::kStreamJson) {
    stream = std::make_unique<StreamJsonWriter>(options.out_fd);
    parts.events = stream.get();
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
