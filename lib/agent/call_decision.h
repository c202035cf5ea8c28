// The permission decision of one tool call: the rules first (deny wins, a
// session answer is remembered), then the question when a rule or the
// call's kind asks for one. For a call a helper acts on (the stager for a
// host command, the applier for an edit), a call that would ask is only
// proposed: that helper asks the person itself, and its answer is the one
// that counts; an editor's session (RelaysAnswers) asks here and relays
// the answer to the helper. The agent's own refusals (a deny rule, nobody
// to ask) still stop the call here: refusing needs no one's trust.
//
// It decides and asks; the call (tool_run.h) audits what it decided and
// makes the model's result of a refusal.
#ifndef GARUDA_LIB_AGENT_CALL_DECISION_H_
#define GARUDA_LIB_AGENT_CALL_DECISION_H_

#include <optional>
#include <string>

#include "lib/agent/tool_calls.h"
#include "lib/changeset/changeset.h"
#include "lib/permissions/permissions.h"

namespace garuda {
namespace agent {

// The answer relayed to a helper, marked with where it came from.
RelayedAnswer RelayedYes(bool yes, const std::string& from);

// What was decided.
struct Decided {
  // The call may run: "allow" or "propose" (the helper asks); else "deny".
  std::string verdict;
  // Why, for the audit and the report ("allowed by ...", "asked: no").
  std::string text;
  // A refusal's result for the model.
  std::string for_model;
  // The editor's answer the helper gets (RelaysAnswers only).
  std::optional<RelayedAnswer> relayed;

  bool allowed() const { return verdict != "deny"; }
};

// The question's words: what the call does, and why it asks when no rule
// says why.
struct CallQuestion {
  bool ask_by_default = false;
  std::string summary;
  std::string detail;
  // The program that will act, or null (the agent acts itself).
  const char* helper = nullptr;
  // An edit's change list, for an editor's diff view; may be null.
  const ChangeSet* edit = nullptr;
};

class CallDecision {
 public:
  // Of `context` it uses the permissions and the interaction. Nothing is
  // owned.
  CallDecision(const ToolContext& context, const std::string& tool,
               const PermissionRequest& request)
      : c_(context), tool_(tool), request_(request) {}

  Decided Decide(const CallQuestion& question);

 private:
  // The person's (or the editor's) answer to `question`.
  Decided Ask(const CallQuestion& question, const std::string& why, bool relay);

  const ToolContext& c_;
  const std::string& tool_;
  const PermissionRequest& request_;
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_CALL_DECISION_H_
