// The helper that acts decides: garuda-applier before it writes a change
// to the project, garuda-stager before it runs a command on the host. The
// agent only proposes; its word that "the person said yes" is never taken
// where the helper can find out itself (as OpenSSH's monitor decides
// authentication itself).
//
// How a helper finds out is fixed when it starts (--consent):
//   terminal  a person is at the terminal: the helper asks on it
//             (/dev/tty, opened at start, before the lockdown), unless a
//             rule of the settings decides first;
//   rules     nobody to ask (one-shot, jobs): only an allow rule of the
//             settings the helper read itself, at start, lets it act;
//   relayed   the answer can only come through the agent (an editor over
//             ACP): besides the rules, the answer the agent relays is
//             taken, and the decision says so (the one place the agent is
//             trusted; docs/lockdown.md).
// In every mode a deny rule refuses, and an allow rule allows without a
// question, except for a sensitive file (lib/permissions). A command's
// staged changes (spec T5) always get the question in the terminal mode
// (apply all, discard all, or file by file); without a person they are
// applied only when an allow rule lets write_file write every changed
// path, or, when the helper was started with --apply-staged (rules mode
// only), when no rule denies or asks about any of them.
#ifndef GARUDA_LIB_CONSENT_CONSENT_H_
#define GARUDA_LIB_CONSENT_CONSENT_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/changeset.h"
#include "lib/permissions/permissions.h"
#include "lib/question/permission_question.h"
#include "lib/question/question.h"

namespace garuda {

enum class ConsentMode { kRules, kTerminal, kRelayed };

// How a change applied by --apply-staged was decided (the audit log's
// consent event).
inline constexpr char kApplyStagedHow[] =
    "applied by --apply-staged (garuda-agent -p --apply-staged): no person "
    "was asked";

// "rules", "terminal", "relayed" (the --consent flag of the helpers).
absl::StatusOr<ConsentMode> ParseConsentMode(absl::string_view text);
const char* ConsentModeName(ConsentMode mode);

// Who answers the questions in the terminal mode: the person on the
// terminal, or a test's script.
class Asker {
 public:
  virtual ~Asker() = default;
  virtual PermissionAnswer AskPermission(
      const PermissionQuestion& question) = 0;
  virtual Answer AskChangeSet(const ChangeSet& change_set,
                              const Rendered& rendered) = 0;
  // The question with the per-file choice; by default all or nothing.
  virtual ChangeAnswer AskChanges(const ChangeSet& change_set,
                                  const Rendered& rendered) {
    ChangeAnswer answer;
    answer.answer = AskChangeSet(change_set, rendered);
    return answer;
  }
};

// Asks on the terminal `path` (normally /dev/tty), opened now: each
// question takes the terminal's foreground for its time (TerminalTurn).
absl::StatusOr<std::unique_ptr<Asker>> OpenTerminalAsker(
    const std::string& path);

// The agent's relayed answer (relayed mode only): from whom it came.
struct RelayedConsent {
  std::string from;  // "acp": the editor's permission answer
  bool yes = false;
};

struct ConsentDecision {
  bool yes = false;
  // How it was decided, for the audit and the model: "asked: yes",
  // "allowed by write_file from ~/.garuda/settings.json", "no person to
  // ask: no", "answer relayed by garuda-agent from acp: yes".
  std::string how;
  // A command's changes: yes for the changes at `chosen` only (the
  // person's per-file choice; lib/question/choice.h makes them whole).
  bool some = false;
  std::vector<size_t> chosen;
  // No: nobody could answer (no person, no allow rule); a person may
  // still review the list later.
  bool no_person = false;
  // Yes: by --apply-staged, with no question.
  bool by_apply_staged = false;
};

struct ConsentOptions {
  ConsentMode mode = ConsentMode::kRules;
  std::string terminal = "/dev/tty";  // the terminal mode's terminal
  // Rules besides the settings' (a job's own, read by the helper from the
  // job file), named by `extra_rules_source`; none when empty.
  PermissionSettings extra_rules;
  std::string extra_rules_source;
  // Rules mode only (garuda-agent -p --apply-staged): a command's complete
  // change list is applied without a question unless a rule denies or
  // asks about one of its paths (a sensitive name asks).
  bool apply_staged = false;
};

class Consent {
 public:
  // Reads the permission rules of `project`'s settings sources itself
  // (lib/policy/sources.h) and, in the terminal mode, opens the terminal:
  // both before the helper locks itself down.
  static absl::StatusOr<std::unique_ptr<Consent>> Open(
      const ConsentOptions& options, const std::string& project);
  // For tests: the rules and the asker given (the asker only for kTerminal).
  Consent(ConsentMode mode, Permissions permissions,
          std::unique_ptr<Asker> asker);

  ConsentMode mode() const { return mode_; }
  // Whether an on_host command could ever be agreed to: a person or a
  // relayed answer may say yes, or an allow rule names commands (`bash`,
  // `bash(make *)`). False: every one is refused, so garuda-stager keeps no
  // on_host runner for the session (docs/lockdown.md, "The host runner").
  bool MayAgreeToHostCommands() const;
  // --apply-staged; refused (INVALID_ARGUMENT) outside the rules mode,
  // where a person or the agent's relayed answer decides.
  absl::Status SetApplyStaged(bool apply_staged);

  // A command the agent wants to run outside the OS sandbox. `why` (from
  // the agent, shown as its words) says why it asks.
  ConsentDecision ForHostCommand(const std::string& command,
                                 const std::string& why,
                                 const std::optional<RelayedConsent>& relayed);
  // An edit_file or write_file call's one-file change list. `project_fd`
  // (or -1) gives the old content for the diff.
  ConsentDecision ForEdit(const ChangeSet& change_set, const std::string& tool,
                          int project_fd,
                          const std::optional<RelayedConsent>& relayed);
  // A staged command's changes (the T5 question).
  ConsentDecision ForCommandChanges(
      const ChangeSet& change_set, int project_fd,
      const std::optional<RelayedConsent>& relayed);

 private:
  // Rules first; then the person (terminal), the relayed answer (relayed)
  // or no. `ask` is the question, `ask_by_default` whether no rule at all
  // asks (an on_host command, an edit) rather than allows.
  ConsentDecision Decide(const PermissionRequest& request,
                         const PermissionQuestion& question,
                         const std::optional<RelayedConsent>& relayed);
  ConsentDecision Relayed(const std::optional<RelayedConsent>& relayed);

  ConsentMode mode_;
  bool apply_staged_ = false;
  Permissions permissions_;
  std::unique_ptr<Asker> asker_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_CONSENT_CONSENT_H_
