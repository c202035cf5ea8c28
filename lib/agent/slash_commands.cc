#include "lib/agent/slash_commands.h"

#include <string.h>

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/agent/schedule.h"
#include "lib/agent/session_view.h"
#include "lib/agent/tool_calls.h"
#include "lib/base/status_macros.h"
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
    "  /mcp           the MCP servers (state, sandbox, tools, last error); "
    "/mcp restart|resources|prompts NAME, /mcp read NAME URI, /mcp prompt "
    "NAME PROMPT [ARG=VALUE ...]\n"
    "  /exit          leave";

}  // namespace

absl::StatusOr<Session::LineOutcome> SlashCommands::Run(
    const std::string& line) {
  using Handler = absl::Status (SlashCommands::*)(const std::string& arg);
  // The command (with its argument after a space when it takes one) and
  // its handler.
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
      {"/mcp", true, &SlashCommands::Mcp},
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

absl::Status SlashCommands::Mcp(const std::string& arguments) {
  out().ShowNotice(c_.parts->mcp != nullptr
                       ? c_.parts->mcp->Command(arguments)
                       : "No MCP servers in this session (docs/mcp.md).");
  return absl::OkStatus();
}

absl::Status SlashCommands::Help(const std::string&) {
  out().ShowNotice(kHelp);
  return absl::OkStatus();
}

absl::Status SlashCommands::Undo(const std::string&) {
  const SessionParts& parts = *c_.parts;
  absl::StatusOr<applier::UndoOutcome> undone =
      parts.applier->Undo("", c_.config->session_id);
  if (!undone.ok()) {
    RETURN_IF_ERROR(c_.stops->CheckHelpers());
    RETURN_IF_ERROR(parts.audit->Record(MakeEvent(
        "undo", "", "", "failed", std::string(undone.status().message()))));
    out().ShowNotice(
        absl::StrCat("Nothing undone: ", undone.status().message()));
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(parts.audit->Record(
      MakeEvent("undo", "", undone->undo_id(), "undone", undone->line())));
  out().ShowNotice(UndoText(*undone, Staged(*c_.config)));
  return c_.conversation->NoteForModel(absl::StrCat(
      "[Garuda: the person undid a change: ", undone->line(), "]"));
}

absl::Status SlashCommands::Output(const std::string&) {
  if (!out().ShowLastOutput()) {
    out().ShowNotice("No command output to show yet.");
  }
  return absl::OkStatus();
}

absl::Status SlashCommands::Audit(const std::string&) {
  out().ShowNotice(c_.parts->verify_audit
                       ? c_.parts->verify_audit()
                       : "audit verify is not available here");
  return absl::OkStatus();
}

absl::Status SlashCommands::Budget(const std::string&) {
  absl::StatusOr<budget::BudgetStatus> status = c_.parts->budget->Status();
  if (!status.ok()) {
    RETURN_IF_ERROR(c_.stops->CheckHelpers());
    return status.status();
  }
  out().ShowNotice(BudgetText(*status, *c_.descriptions));
  return absl::OkStatus();
}

absl::Status SlashCommands::Mode(const std::string&) {
  const stager::SessionDescription& d = c_.config->description;
  out().ShowNotice(absl::StrCat(
      "commands: ", d.mode().empty() ? "direct" : d.mode(),
      d.backend().empty() ? "" : absl::StrCat(" (", d.backend(), ")"),
      "; profile: ", c_.config->strict ? "strict" : "default",
      "; sandbox: ", d.sandboxed() ? "on" : "none",
      ". The mode is set when the session starts: \"commands\": {\"mode\": "
      "\"staged\"} in the settings."));
  return absl::OkStatus();
}

// The summary request is metered like a turn's and stops on Ctrl-C.
absl::Status SlashCommands::Compact(const std::string&) {
  if (c_.parts->model == nullptr) {
    out().ShowNotice(c_.config->no_model_hint);
    return absl::OkStatus();
  }
  provider::BudgetRequestMeter budget_meter(c_.parts->budget);
  CancelFlag never;
  return c_.compaction
      ->Run(&budget_meter, c_.cancel != nullptr ? c_.cancel : &never, nullptr)
      .status();
}

absl::Status SlashCommands::Schedule(const std::string& name) {
  return ScheduleJob(
      c_.conversation->messages(), *c_.parts, c_.config->session_id, name,
      [this](const std::string& prompt) -> absl::StatusOr<WrittenPrompt> {
        ASSIGN_OR_RETURN(TurnOutcome outcome, c_.run_turn(prompt));
        return WrittenPrompt{outcome.answer, outcome.end == TurnEnd::kAnswered,
                             outcome.stopped};
      });
}

absl::Status SlashCommands::Clear(const std::string&) {
  c_.forget();
  RETURN_IF_ERROR(c_.conversation->Clear());
  out().ShowNotice("The conversation was cleared.");
  return absl::OkStatus();
}

}  // namespace agent
}  // namespace garuda
