// What a session needs from the person at the other end, as two narrow
// interfaces (what the person sees, what the person is asked) and their
// sum, Interaction: the session (lib/agent/session.h) is given one; the
// terminal (lib/terminal/terminal.h), the one-shot mode (no terminal: every
// question is answered "no") and an editor (lib/acp) implement it.
#ifndef GARUDA_LIB_AGENT_INTERACTION_H_
#define GARUDA_LIB_AGENT_INTERACTION_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/changeset/changeset.h"
#include "lib/question/permission_question.h"
#include "lib/question/question.h"

namespace garuda {
namespace agent {

// The permission question and its answers (lib/question): the agent asks
// it for the calls it runs itself; the applier and the stager ask it on
// their own for what they do (lib/consent).
using garuda::PermissionAnswer;
using garuda::PermissionQuestion;

// A tool call as it starts and as it ends, for the person to follow.
struct ToolCallView {
  std::string id;
  std::string tool;
  std::string summary;  // "bash: make test", "read_file src/x.c"
};

struct ToolOutcomeView {
  std::string id;
  std::string tool;
  std::string outcome;  // one line: "exited with code 0", "applied 2 files"
  bool is_error = false;
  // A command's output as captured (stdout, then stderr, each with a note
  // when the capture cut it); empty for other tools. The terminal shows its
  // last lines and keeps it for /output.
  std::string output;
  // The person stopped the command (Ctrl-C).
  bool stopped = false;
};

// A command that runs, as its watch reports it (lib/agent/command_progress.h).
struct CommandProgress {
  absl::Duration elapsed;
  std::string last_line;  // the last line of output so far, may be ""
};

// What the person sees: the model's text, the tool calls as they start and
// end, notices, a running command's progress and the status line. The turn
// loop, compaction and the ends of a turn need only this.
class PersonDisplay {
 public:
  virtual ~PersonDisplay() = default;

  // Model text as it streams.
  virtual void ShowText(absl::string_view text) = 0;
  // The model's text of a failed attempt is void (a retry streams it again).
  virtual void ShowRetry(absl::string_view reason) = 0;
  virtual void ShowToolCall(const ToolCallView& call) = 0;
  virtual void ShowToolOutcome(const ToolOutcomeView& outcome) = 0;
  // A line for the person: the first line of the session, a notice, an error.
  virtual void ShowNotice(absl::string_view line) = 0;
  // While a command runs, between its ShowToolCall and ShowToolOutcome:
  // called from the command's watching thread while the session's thread
  // waits for the command (never at the same time as another call).
  virtual void ShowCommandProgress(const CommandProgress& progress) {}
  // /output: the whole output of the last command shown; false when there
  // is none (or this interaction keeps none).
  virtual bool ShowLastOutput() { return false; }
  // After a turn of a line session: one short line (tokens, budget, mode).
  virtual void ShowStatusLine(absl::string_view line) {}
};

// What the person is asked, and the terminal handed to a helper that asks
// on its own. A tool call's decision (call_decision.h) and the helpers'
// calls need this.
class PersonQuestions {
 public:
  virtual ~PersonQuestions() = default;

  // True when a person can answer questions now.
  virtual bool CanAsk() const = 0;

  // A helper (garuda-applier, garuda-stager) is about to ask the person on
  // the terminal itself: what the session printed is ended (no half line,
  // nothing held back), and nothing more is printed until TakeBackTerminal.
  virtual void HandOverTerminal() {}
  // The helper's question is over (or the helper died during it): the
  // terminal's foreground is the agent's again.
  virtual void TakeBackTerminal() {}

  // Asked only when CanAsk(); a session without a person answers kNo itself.
  virtual PermissionAnswer AskPermission(
      const PermissionQuestion& question) = 0;
  // The question of spec T5 (lib/question): apply or discard a command's
  // changes. Asked only of an interaction that RelaysAnswers(): on a
  // terminal the applier asks it itself, and with nobody it is never asked.
  virtual Answer AskChangeSet(const ChangeSet& change_set,
                              const Rendered& rendered) {
    return Answer::kDiscard;
  }

  // An editor over ACP (lib/acp): the helpers were started with
  // --consent=relayed and can ask nobody themselves, so the agent asks here
  // what they would have asked on a terminal and relays the answer, which
  // they take marked as the agent's word (docs/acp.md, docs/lockdown.md).
  virtual bool RelaysAnswers() const { return false; }
  // An edit's question with its one-file change list, for an interaction
  // that shows the change itself (an editor's diff view).
  virtual PermissionAnswer AskEdit(const PermissionQuestion& question,
                                   const ChangeSet& change_set) {
    return AskPermission(question);
  }
};

// The person at the other end, both sides: what a session is given and
// what the terminal, the one-shot mode and an editor implement.
class Interaction : public PersonDisplay, public PersonQuestions {};

// Reads the person's next line (a prompt, a slash command, "!command").
class LineSource {
 public:
  virtual ~LineSource() = default;
  // nullopt at the end of input, or when the person asked to leave (a
  // second Ctrl-C at an empty prompt).
  virtual std::optional<std::string> ReadLine(absl::string_view prompt) = 0;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_INTERACTION_H_
