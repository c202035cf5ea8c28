// A line session's side of Session: the person's lines (a prompt, a slash
// command: slash_commands.h, "!command"), the status line after a turn, and
// the loop over the lines.
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "lib/agent/session.h"
#include "lib/agent/session_view.h"
#include "lib/agent/slash_commands.h"
#include "lib/agent/tool_calls.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace agent {
namespace {

// The status line after a turn of a line session (session_view.h).
void ShowTurnStatus(const SessionParts& parts,
                    const stager::SessionDescription& d,
                    const TurnOutcome& outcome) {
  absl::StatusOr<budget::BudgetStatus> status = parts.budget->Status();
  parts.interaction->ShowStatusLine(TurnStatusLine(
      outcome.usage, status.ok() ? &*status : nullptr, d.mode(), d.backend()));
}

}  // namespace

absl::StatusOr<Session::LineOutcome> Session::HandleLine(
    const std::string& line, const CancelFlag* cancel) {
  std::string trimmed(absl::StripAsciiWhitespace(line));
  if (trimmed.empty()) return LineOutcome::kContinue;
  if (trimmed[0] == '/') {
    SlashContext context;
    context.config = &config_;
    context.parts = &parts_;
    context.conversation = &conversation_;
    context.stops = &stops_;
    context.compaction = &compaction_;
    context.descriptions = &descriptions_;
    context.cancel = cancel;
    context.run_turn = [this](const std::string& prompt) {
      return RunTurn(prompt, nullptr);
    };
    context.forget = [this] {
      pending_person_output_.clear();
      requests_.ForgetMeasure();
    };
    return SlashCommands(std::move(context)).Run(trimmed);
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
    RETURN_IF_ERROR(stops_.CheckHelpers());
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
