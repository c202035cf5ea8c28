// A line session's side of Session: the person's lines (a prompt, a slash
// command, "!command"), the status line after a turn, and the loop over
// the lines.
#include <string.h>

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

// The status line after a turn of a line session (session_view.h).
void ShowTurnStatus(const SessionParts& parts,
                    const stager::SessionDescription& d,
                    const TurnOutcome& outcome) {
  absl::StatusOr<budget::BudgetStatus> status = parts.budget->Status();
  parts.interaction->ShowStatusLine(TurnStatusLine(
      outcome.usage, status.ok() ? &*status : nullptr, d.mode(), d.backend()));
}

}  // namespace

// The slash commands, one row each: the command (with its argument after
// a space for /schedule), and its handler over the session. Any other line
// that starts with '/' gets the help.
class SlashCommands {
 public:
  explicit SlashCommands(Session& session) : s_(session) {}

  absl::StatusOr<Session::LineOutcome> Run(const std::string& line) {
    using Handler = absl::Status (SlashCommands::*)(const std::string& arg);
    struct Row {
      const char* name;
      bool takes_argument;
      Handler handler;
    };
    static constexpr Row kCommands[] = {
        {"/help", false, &SlashCommands::Help},
        {"/undo", false, &SlashCommands::Undo},
        {"/output", false, &SlashCommands::Output},
        {"/audit", false, &SlashCommands::Audit},
        {"/audit verify", false, &SlashCommands::Audit},
        {"/budget", false, &SlashCommands::Budget},
        {"/mode", false, &SlashCommands::Mode},
        {"/compact", false, &SlashCommands::Compact},
        {"/schedule", true, &SlashCommands::Schedule},
        {"/clear", false, &SlashCommands::Clear},
    };
    if (line == "/exit" || line == "/quit") return Session::LineOutcome::kExit;
    for (const Row& row : kCommands) {
      const bool exact = line == row.name;
      if (exact || (row.takes_argument &&
                    absl::StartsWith(line, absl::StrCat(row.name, " ")))) {
        RETURN_IF_ERROR(
            (this->*row.handler)(exact ? "" : line.substr(strlen(row.name))));
        return Session::LineOutcome::kContinue;
      }
    }
    out().ShowNotice(absl::StrCat("Unknown command ", line, ". ", kHelp));
    return Session::LineOutcome::kContinue;
  }

 private:
  Interaction& out() { return *s_.parts_.interaction; }

  absl::Status Help(const std::string&) {
    out().ShowNotice(kHelp);
    return absl::OkStatus();
  }

  absl::Status Undo(const std::string&) {
    absl::StatusOr<applier::UndoOutcome> undone =
        s_.parts_.applier->Undo("", s_.config_.session_id);
    if (!undone.ok()) {
      RETURN_IF_ERROR(s_.CheckHelpers());
      RETURN_IF_ERROR(s_.parts_.audit->Record(MakeEvent(
          "undo", "", "", "failed", std::string(undone.status().message()))));
      out().ShowNotice(
          absl::StrCat("Nothing undone: ", undone.status().message()));
      return absl::OkStatus();
    }
    RETURN_IF_ERROR(s_.parts_.audit->Record(
        MakeEvent("undo", "", undone->undo_id(), "undone", undone->line())));
    out().ShowNotice(UndoText(*undone, s_.staged()));
    return s_.conversation_.NoteForModel(absl::StrCat(
        "[Garuda: the person undid a change: ", undone->line(), "]"));
  }

  absl::Status Output(const std::string&) {
    if (!out().ShowLastOutput()) {
      out().ShowNotice("No command output to show yet.");
    }
    return absl::OkStatus();
  }

  absl::Status Audit(const std::string&) {
    out().ShowNotice(s_.parts_.verify_audit
                         ? s_.parts_.verify_audit()
                         : "audit verify is not available here");
    return absl::OkStatus();
  }

  absl::Status Budget(const std::string&) {
    absl::StatusOr<budget::BudgetStatus> status = s_.parts_.budget->Status();
    if (!status.ok()) {
      RETURN_IF_ERROR(s_.CheckHelpers());
      return status.status();
    }
    out().ShowNotice(BudgetText(*status, s_.descriptions_));
    return absl::OkStatus();
  }

  absl::Status Mode(const std::string&) {
    const stager::SessionDescription& d = s_.config_.description;
    out().ShowNotice(absl::StrCat(
        "commands: ", d.mode().empty() ? "direct" : d.mode(),
        d.backend().empty() ? "" : absl::StrCat(" (", d.backend(), ")"),
        "; profile: ", s_.config_.strict ? "strict" : "default",
        "; sandbox: ", d.sandboxed() ? "on" : "none",
        ". The mode is set when the session starts: \"commands\": {\"mode\": "
        "\"staged\"} in the settings."));
    return absl::OkStatus();
  }

  // The summary request is metered like a turn's and stops on Ctrl-C.
  absl::Status Compact(const std::string&) {
    if (s_.parts_.model == nullptr) {
      out().ShowNotice(s_.config_.no_model_hint);
      return absl::OkStatus();
    }
    provider::BudgetRequestMeter budget_meter(s_.parts_.budget);
    CancelFlag never;
    return s_
        .Compact(&budget_meter,
                 s_.line_cancel_ != nullptr ? s_.line_cancel_ : &never, nullptr)
        .status();
  }

  absl::Status Schedule(const std::string& name) {
    return ScheduleJob(
        s_.conversation_.messages(), s_.parts_, s_.config_.session_id, name,
        [this](const std::string& prompt) -> absl::StatusOr<WrittenPrompt> {
          ASSIGN_OR_RETURN(TurnOutcome outcome, s_.RunTurn(prompt, nullptr));
          return WrittenPrompt{outcome.answer,
                               outcome.end == TurnEnd::kAnswered,
                               outcome.stopped};
        });
  }

  absl::Status Clear(const std::string&) {
    s_.pending_person_output_.clear();
    s_.last_input_tokens_ = 0;
    RETURN_IF_ERROR(s_.conversation_.Clear());
    out().ShowNotice("The conversation was cleared.");
    return absl::OkStatus();
  }

  Session& s_;
};

absl::StatusOr<Session::LineOutcome> Session::HandleLine(
    const std::string& line, const CancelFlag* cancel) {
  std::string trimmed(absl::StripAsciiWhitespace(line));
  if (trimmed.empty()) return LineOutcome::kContinue;
  if (trimmed[0] == '/') {
    line_cancel_ = cancel;  // /compact's request stops on Ctrl-C too
    return SlashCommands(*this).Run(trimmed);
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
  ShowTurnStatus(parts_, config_.description, outcome);
  return LineOutcome::kContinue;
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
