// A line session's side of Session: the person's lines (a prompt, a slash
// command, "!command"), the status line after a turn, and the loop over
// the lines.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "lib/agent/builtin_rows.h"
#include "lib/agent/command_tool.h"
#include "lib/agent/schedule.h"
#include "lib/agent/session.h"
#include "lib/agent/session_view.h"
#include "lib/agent/system_prompt.h"
#include "lib/agent/tool_calls.h"
#include "lib/agent/usage_meter.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/budget/limits.h"
#include "lib/provider/budget_meter.h"

namespace garuda {
namespace agent {
namespace {

constexpr char kHelp[] =
    "Type a request for the model, or:\n"
    "  !COMMAND       run a command yourself (in the sandbox in the strict "
    "profile, else on the host)\n"
    "  /help          this text\n"
    "  /undo          undo this session's last applied change\n"
    "  /output        the whole output of the last command\n"
    "  /audit verify  check the audit logs of this project\n"
    "  /budget        the token budget: limit, spent, left, per agent\n"
    "  /mode          the command mode, backend, profile and sandbox\n"
    "  /compact       replace the conversation by the model's summary of it\n"
    "  /schedule [NAME]  propose this as an unattended job "
    "(.garuda/jobs/NAME.json)\n"
    "  /clear         start a new conversation (the model forgets this one)\n"
    "  /exit          leave";

}  // namespace

absl::StatusOr<Session::LineOutcome> Session::HandleLine(
    const std::string& line, const CancelFlag* cancel) {
  std::string trimmed(absl::StripAsciiWhitespace(line));
  if (trimmed.empty()) return LineOutcome::kContinue;
  if (trimmed[0] == '/') {
    line_cancel_ = cancel;  // /compact's request stops on Ctrl-C too
    return SlashCommand(trimmed);
  }
  if (trimmed[0] == '!') {
    std::string command(absl::StripAsciiWhitespace(trimmed.substr(1)));
    if (command.empty()) return LineOutcome::kContinue;
    ToolContext tools = Tools();
    tools.cancel = cancel;
    ASSIGN_OR_RETURN(std::string output, RunPersonCommand(tools, command));
    parts_.interaction->ShowNotice(output);
    absl::StrAppend(&pending_person_output_, "[The person ran `", command,
                    "` themselves:]\n", output);
    RETURN_IF_ERROR(CheckHelpers());
    return LineOutcome::kContinue;
  }
  ASSIGN_OR_RETURN(TurnOutcome outcome, RunTurn(trimmed, cancel));
  ShowTurnStatus(outcome);
  return LineOutcome::kContinue;
}

absl::StatusOr<Session::LineOutcome> Session::SlashCommand(
    const std::string& line) {
  Interaction& out = *parts_.interaction;
  if (line == "/exit" || line == "/quit") return LineOutcome::kExit;
  if (line == "/help") {
    out.ShowNotice(kHelp);
  } else if (line == "/undo") {
    absl::StatusOr<applier::UndoOutcome> undone =
        parts_.applier->Undo("", config_.session_id);
    if (!undone.ok()) {
      RETURN_IF_ERROR(CheckHelpers());
      RETURN_IF_ERROR(parts_.audit->Record(MakeEvent(
          "undo", "", "", "failed", std::string(undone.status().message()))));
      out.ShowNotice(
          absl::StrCat("Nothing undone: ", undone.status().message()));
    } else {
      RETURN_IF_ERROR(parts_.audit->Record(
          MakeEvent("undo", "", undone->undo_id(), "undone", undone->line())));
      out.ShowNotice(UndoText(*undone, staged()));
      RETURN_IF_ERROR(conversation_.NoteForModel(absl::StrCat(
          "[Garuda: the person undid a change: ", undone->line(), "]")));
    }
  } else if (line == "/output") {
    if (!out.ShowLastOutput()) out.ShowNotice("No command output to show yet.");
  } else if (line == "/audit verify" || line == "/audit") {
    out.ShowNotice(parts_.verify_audit ? parts_.verify_audit()
                                       : "audit verify is not available here");
  } else if (line == "/budget") {
    absl::StatusOr<budget::BudgetStatus> status = parts_.budget->Status();
    if (!status.ok()) {
      RETURN_IF_ERROR(CheckHelpers());
      return status.status();
    }
    out.ShowNotice(BudgetText(*status, descriptions_));
  } else if (line == "/mode") {
    const stager::SessionDescription& d = config_.description;
    out.ShowNotice(absl::StrCat(
        "commands: ", d.mode().empty() ? "direct" : d.mode(),
        d.backend().empty() ? "" : absl::StrCat(" (", d.backend(), ")"),
        "; profile: ", config_.strict ? "strict" : "default",
        "; sandbox: ", d.sandboxed() ? "on" : "none",
        ". The mode is set when the session starts: \"commands\": {\"mode\": "
        "\"staged\"} in the settings."));
  } else if (line == "/compact") {
    RETURN_IF_ERROR(CompactNow());
  } else if (line == "/schedule" || absl::StartsWith(line, "/schedule ")) {
    RETURN_IF_ERROR(ScheduleJob(
        conversation_.messages(), parts_, config_.session_id, line.substr(9),
        [this](const std::string& prompt) -> absl::StatusOr<WrittenPrompt> {
          ASSIGN_OR_RETURN(TurnOutcome outcome, RunTurn(prompt, nullptr));
          return WrittenPrompt{outcome.answer,
                               outcome.end == TurnEnd::kAnswered,
                               outcome.stopped};
        }));
  } else if (line == "/clear") {
    pending_person_output_.clear();
    last_input_tokens_ = 0;
    RETURN_IF_ERROR(conversation_.Clear());
    out.ShowNotice("The conversation was cleared.");
  } else {
    out.ShowNotice(absl::StrCat("Unknown command ", line, ". ", kHelp));
  }
  return LineOutcome::kContinue;
}

void Session::ShowTurnStatus(const TurnOutcome& outcome) {
  absl::StatusOr<budget::BudgetStatus> status = parts_.budget->Status();
  const stager::SessionDescription& d = config_.description;
  parts_.interaction->ShowStatusLine(TurnStatusLine(
      outcome.usage, status.ok() ? &*status : nullptr, d.mode(), d.backend()));
}

absl::Status RunLines(Session& session, LineSource& lines, CancelFlag* cancel) {
  while (true) {
    if (cancel != nullptr) cancel->Reset();
    std::optional<std::string> line = lines.ReadLine("> ");
    if (!line) return absl::OkStatus();
    ASSIGN_OR_RETURN(Session::LineOutcome outcome,
                     session.HandleLine(*line, cancel));
    if (outcome == Session::LineOutcome::kExit) return absl::OkStatus();
  }
}

}  // namespace agent
}  // namespace garuda
