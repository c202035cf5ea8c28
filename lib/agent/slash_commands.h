// The slash commands of a line session (/help, /undo, /compact,
// /schedule, ...): a table of rows, each a command and its handler over
// the few parts of the session it needs (SlashContext). A row is one line
// of the table in slash_commands.cc and one handler.
#ifndef GARUDA_LIB_AGENT_SLASH_COMMANDS_H_
#define GARUDA_LIB_AGENT_SLASH_COMMANDS_H_

#include <functional>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/agent/compaction.h"
#include "lib/agent/conversation.h"
#include "lib/agent/session.h"
#include "lib/agent/session_parts.h"
#include "lib/agent/turn_outcome.h"
#include "lib/agent/turn_stops.h"
#include "lib/base/cancel_flag.h"

namespace garuda {
namespace agent {

// What the slash commands use of their session; nothing is owned.
struct SlashContext {
  const SessionConfig* config = nullptr;
  const SessionParts* parts = nullptr;
  Conversation* conversation = nullptr;
  const TurnStops* stops = nullptr;
  Compaction* compaction = nullptr;
  // Agent id -> the task's description, for /budget.
  const std::map<std::string, std::string>* descriptions = nullptr;
  // The line's cancel: /compact's request stops on Ctrl-C too. May be
  // null.
  const CancelFlag* cancel = nullptr;
  // A turn of the session (/schedule's prompt for the job).
  std::function<absl::StatusOr<TurnOutcome>(const std::string& prompt)>
      run_turn;
  // /clear: what the session carries into its next request (the person's
  // command output, the last measured input) is forgotten.
  std::function<void()> forget;
};

class SlashCommands {
 public:
  explicit SlashCommands(SlashContext context) : c_(std::move(context)) {}

  // A line that starts with '/'; one no row names gets the help. An error
  // only when the session cannot go on.
  absl::StatusOr<Session::LineOutcome> Run(const std::string& line);

 private:
  PersonDisplay& out() { return *c_.parts->interaction; }

  absl::Status Help(const std::string&);
  absl::Status Mcp(const std::string& arguments);
  absl::Status Undo(const std::string&);
  absl::Status Output(const std::string&);
  absl::Status Audit(const std::string&);
  absl::Status Budget(const std::string&);
  absl::Status Mode(const std::string&);
  absl::Status Compact(const std::string&);
  absl::Status Schedule(const std::string& name);
  absl::Status Clear(const std::string&);

  SlashContext c_;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_SLASH_COMMANDS_H_
