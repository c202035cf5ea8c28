// Deciding a tool call from the permission rules of the settings and the
// answers given in this session.
//
// Precedence: a deny rule wins over an ask rule, an ask rule over an allow
// rule or a session answer. An edit (edit_file, write_file) of a sensitive
// file (policies/sensitive.txt) asks even when an allow rule or a session
// answer covers it; only a deny rule is stronger. A bash command made of
// several commands ("a && b", "a | b", "$(b)") is allowed only when every
// part is allowed; a command the splitter cannot read safely asks.
#ifndef GARUDA_LIB_PERMISSIONS_PERMISSIONS_H_
#define GARUDA_LIB_PERMISSIONS_PERMISSIONS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/permissions/rules.h"
#include "lib/policy/sources.h"
#include "proto/settings.pb.h"

namespace garuda {

// What a call is matched on.
struct PermissionRequest {
  std::string tool;
  // bash: the command. Path tools: the path relative to the project root,
  // normalized ("" for the root), as the tool resolved it.
  std::string argument;
  // An MCP tool's server rule ("mcp__github" for "mcp__github__search"):
  // a rule of this name decides the call as well as one of `tool`. Given
  // apart because a server's name may itself hold "__".
  std::string server_rule;
};

enum class Verdict {
  kNoRule,  // no rule decides: the caller's default applies
  kAllow,
  kAsk,
  kDeny,
};

const char* VerdictName(Verdict verdict);

struct Decision {
  Verdict verdict = Verdict::kNoRule;
  // The rule that decided ("bash(rm *)" from ~/.garuda/settings.json), or
  // why it asks although a rule allows ("src/.env is a sensitive file").
  std::string reason;
  // The rules that allowed the call (several for a compound command).
  std::vector<std::string> allowed_by;
};

class Permissions {
 public:
  Permissions() = default;

  // Rules of one settings file, `source` naming it in errors.
  absl::Status AddRules(const PermissionSettings& settings,
                        absl::string_view source);
  // Rules from the four sources of lib/policy/sources.h, each named by its
  // path.
  absl::Status AddRule(Verdict list, absl::string_view text,
                       absl::string_view source);

  Decision Decide(const PermissionRequest& request) const;

  // The rule a person can accept for the rest of the session when they
  // answer yes to `request`: the exact command, or the exact path. None for
  // a bash command that is not one simple command.
  static std::optional<std::string> SessionRuleFor(
      const PermissionRequest& request);

  // "Yes, and don't ask again this session for <rule>": kept in memory
  // only, never written to a settings file.
  absl::Status RememberForSession(absl::string_view rule_text);

  const std::vector<PermissionRule>& allow() const { return allow_; }
  const std::vector<PermissionRule>& ask() const { return ask_; }
  const std::vector<PermissionRule>& deny() const { return deny_; }
  const std::vector<PermissionRule>& session() const { return session_; }

 private:
  std::vector<PermissionRule> allow_, ask_, deny_, session_;
};

// The rules of every settings source, each named by its file. A project's
// settings may add ask and deny rules but not allow rules: a cloned project
// must not be able to allow itself calls (as it cannot turn strict off).
// Its allow rules are left out, and `notices` says so, for the first line
// of the session.
struct LoadedPermissions {
  Permissions permissions;
  std::vector<std::string> notices;
};
absl::StatusOr<LoadedPermissions> LoadPermissions(
    const SettingsSources& sources);

// Whether `rule` matches a call as a whole (every part of a compound bash
// command must match it, or another rule, to be allowed: see Decide).
bool RuleMatches(const PermissionRule& rule, const PermissionRequest& request);

// The edit tools, whose sensitive targets always ask.
bool IsEditTool(absl::string_view tool);

}  // namespace garuda

#endif  // GARUDA_LIB_PERMISSIONS_PERMISSIONS_H_
