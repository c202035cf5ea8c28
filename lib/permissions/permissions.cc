#include "lib/permissions/permissions.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/status_macros.h"
#include "lib/changeset/rules.h"
#include "lib/permissions/shell.h"

namespace garuda {

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kAllow:
      return "allow";
    case Verdict::kAsk:
      return "ask";
    case Verdict::kDeny:
      return "deny";
    default:
      return "no rule";
  }
}

namespace {

bool IsCommandRule(absl::string_view tool) {
  const RuleName* row = FindRuleName(tool);
  return row != nullptr && row->target == RuleTarget::kCommand;
}

}  // namespace

bool IsEditTool(absl::string_view tool) {
  const RuleName* row = FindRuleName(tool);
  return row != nullptr && row->target == RuleTarget::kWritePath;
}

absl::Status Permissions::AddRule(Verdict list, absl::string_view text,
                                  absl::string_view source) {
  ASSIGN_OR_RETURN(PermissionRule rule, ParsePermissionRule(text, source));
  switch (list) {
    case Verdict::kAllow:
      allow_.push_back(std::move(rule));
      break;
    case Verdict::kAsk:
      ask_.push_back(std::move(rule));
      break;
    case Verdict::kDeny:
      deny_.push_back(std::move(rule));
      break;
    default:
      return absl::InvalidArgumentError("a rule must be allow, ask or deny");
  }
  return absl::OkStatus();
}

absl::Status Permissions::AddRules(const PermissionSettings& settings,
                                   absl::string_view source) {
  for (const std::string& text : settings.allow()) {
    RETURN_IF_ERROR(AddRule(Verdict::kAllow, text,
                            absl::StrCat(source, ": permissions.allow")));
  }
  for (const std::string& text : settings.ask()) {
    RETURN_IF_ERROR(AddRule(Verdict::kAsk, text,
                            absl::StrCat(source, ": permissions.ask")));
  }
  for (const std::string& text : settings.deny()) {
    RETURN_IF_ERROR(AddRule(Verdict::kDeny, text,
                            absl::StrCat(source, ": permissions.deny")));
  }
  return absl::OkStatus();
}

absl::Status Permissions::RememberForSession(absl::string_view rule_text) {
  ASSIGN_OR_RETURN(PermissionRule rule,
                   ParsePermissionRule(rule_text, "this session"));
  session_.push_back(std::move(rule));
  return absl::OkStatus();
}

namespace {

// A rule against one text: a simple command, or a whole path.
bool MatchesText(const PermissionRule& rule, absl::string_view text) {
  if (rule.any) return true;
  if (IsCommandRule(rule.tool)) return MatchCommandPattern(rule.pattern, text);
  return MatchPathGlob(rule.pattern, text);
}

std::string Describe(const PermissionRule& rule) {
  return absl::StrCat(rule.text, " (", rule.source, ")");
}

// The rule names the request's tool (or, for an MCP tool, its server).
bool NamesTool(const PermissionRule& rule, const PermissionRequest& request) {
  return rule.tool == request.tool ||
         (!request.server_rule.empty() && rule.tool == request.server_rule);
}

// The first rule of `rules` for the request's tool that matches any of
// `texts`.
const PermissionRule* FirstMatch(const std::vector<PermissionRule>& rules,
                                 const PermissionRequest& request,
                                 const std::vector<std::string>& texts) {
  for (const PermissionRule& rule : rules) {
    if (!NamesTool(rule, request)) continue;
    for (const std::string& text : texts) {
      if (MatchesText(rule, text)) return &rule;
    }
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<LoadedPermissions> LoadPermissions(
    const SettingsSources& sources) {
  LoadedPermissions loaded;
  struct Source {
    const Settings& settings;
    const std::string& path;
    const char* fallback;
  };
  for (const Source& source :
       {Source{sources.managed_policy, sources.managed_policy_path,
               "the managed policy"},
        Source{sources.user_policy, sources.user_policy_path,
               "the user's policy"},
        Source{sources.user_settings, sources.user_settings_path,
               "the user's settings"}}) {
    RETURN_IF_ERROR(loaded.permissions.AddRules(
        source.settings.permissions(),
        source.path.empty() ? source.fallback : source.path));
  }
  PermissionSettings project = sources.project_settings.permissions();
  const std::string project_name = sources.project_settings_path.empty()
                                       ? "the project's settings"
                                       : sources.project_settings_path;
  if (project.allow_size() > 0) {
    loaded.notices.push_back(absl::StrCat(
        project_name,
        ": permissions.allow is ignored in a project's settings (",
        project.allow_size(), project.allow_size() == 1 ? " rule" : " rules",
        "): a project cannot allow itself tool calls; put allow rules in "
        "~/.garuda/settings.json"));
    project.clear_allow();
  }
  RETURN_IF_ERROR(loaded.permissions.AddRules(project, project_name));
  return loaded;
}

bool RuleMatches(const PermissionRule& rule, const PermissionRequest& request) {
  if (!NamesTool(rule, request)) return false;
  if (rule.any) return true;
  if (!IsCommandRule(request.tool))
    return MatchPathGlob(rule.pattern, request.argument);
  CommandSplit split = SplitCommand(request.argument);
  if (!split.complete || split.parts.empty()) return false;
  for (const std::string& part : split.parts) {
    if (!MatchCommandPattern(rule.pattern, part)) return false;
  }
  return true;
}

Decision Permissions::Decide(const PermissionRequest& request) const {
  Decision decision;
  const bool bash = IsCommandRule(request.tool);
  CommandSplit split;
  std::vector<std::string> texts;
  if (bash) {
    split = SplitCommand(request.argument);
    texts = split.parts;
    std::string whole(absl::StripAsciiWhitespace(request.argument));
    if (texts.size() != 1 || texts[0] != whole) texts.push_back(whole);
  } else {
    texts.push_back(request.argument);
  }

  if (const PermissionRule* rule = FirstMatch(deny_, request, texts)) {
    decision.verdict = Verdict::kDeny;
    decision.reason = absl::StrCat("denied by ", Describe(*rule));
    return decision;
  }
  if (const PermissionRule* rule = FirstMatch(ask_, request, texts)) {
    decision.verdict = Verdict::kAsk;
    decision.reason = absl::StrCat("asks by ", Describe(*rule));
    return decision;
  }

  // Allowed only when every part has an allow rule or a session answer.
  std::vector<const PermissionRule*> all;
  for (const PermissionRule& rule : allow_) all.push_back(&rule);
  for (const PermissionRule& rule : session_) all.push_back(&rule);
  std::vector<std::string> parts =
      bash ? split.parts : std::vector<std::string>{request.argument};
  const PermissionRule* whole_tool = nullptr;
  for (const PermissionRule* rule : all) {
    if (NamesTool(*rule, request) && rule->any) {
      whole_tool = rule;
      break;
    }
  }
  if (whole_tool != nullptr) {
    decision.allowed_by.push_back(Describe(*whole_tool));
  } else if (bash && !split.complete) {
    decision.reason = absl::StrCat(
        "no allow rule applies: the command cannot be split safely (",
        split.reason, ")");
    return decision;
  } else if (parts.empty()) {
    return decision;
  } else {
    for (const std::string& part : parts) {
      const PermissionRule* found = nullptr;
      for (const PermissionRule* rule : all) {
        if (NamesTool(*rule, request) && MatchesText(*rule, part)) {
          found = rule;
          break;
        }
      }
      if (found == nullptr) {
        if (bash && parts.size() > 1) {
          decision.reason = absl::StrCat("no allow rule for the part \"", part,
                                         "\" of the command");
        }
        decision.allowed_by.clear();
        return decision;
      }
      std::string described = Describe(*found);
      if (std::find(decision.allowed_by.begin(), decision.allowed_by.end(),
                    described) == decision.allowed_by.end()) {
        decision.allowed_by.push_back(described);
      }
    }
  }

  if (IsEditTool(request.tool) &&
      SensitiveNames::Default().Matches(request.argument)) {
    decision.verdict = Verdict::kAsk;
    decision.reason = absl::StrCat(
        request.argument,
        " is a sensitive file (policies/sensitive.txt): edits always ask");
    return decision;
  }
  decision.verdict = Verdict::kAllow;
  decision.reason =
      absl::StrCat("allowed by ", absl::StrJoin(decision.allowed_by, ", "));
  return decision;
}

std::optional<std::string> Permissions::SessionRuleFor(
    const PermissionRequest& request) {
  // The one tool: a yes for one MCP tool is not one for its whole server.
  if (IsMcpRuleName(request.tool)) return request.tool;
  if (IsCommandRule(request.tool)) {
    CommandSplit split = SplitCommand(request.argument);
    if (!split.complete || split.parts.size() != 1) return std::nullopt;
    // A '*' in the command itself would widen the rule past this command.
    if (split.parts[0].find('*') != std::string::npos) return std::nullopt;
    return absl::StrCat(request.tool, "(", split.parts[0], ")");
  }
  if (IsEditTool(request.tool) &&
      SensitiveNames::Default().Matches(request.argument)) {
    return std::nullopt;  // always asks
  }
  if (request.argument.empty()) return std::nullopt;  // the whole project
  for (char c : request.argument) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') return std::nullopt;
  }
  return absl::StrCat(request.tool, "(", request.argument, ")");
}

}  // namespace garuda
