#include "lib/permissions/rules.h"

#include <fnmatch.h>

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace garuda {

const RuleName* FindRuleName(absl::string_view name) {
  for (const RuleName& row : kRuleNames) {
    if (name == row.name) return &row;
  }
  return nullptr;
}

bool IsMcpRuleName(absl::string_view name) {
  if (!absl::ConsumePrefix(&name, kMcpRulePrefix) || name.empty()) {
    return false;
  }
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' &&
        c != '-') {
      return false;
    }
  }
  return true;
}

std::string RuleNameList() {
  std::vector<std::string> names;
  for (const RuleName& row : kRuleNames) names.push_back(row.name);
  return absl::StrJoin(names, ", ");
}

bool IsPathTool(absl::string_view tool) {
  const RuleName* row = FindRuleName(tool);
  return row != nullptr && row->target != RuleTarget::kCommand;
}

absl::StatusOr<PermissionRule> ParsePermissionRule(absl::string_view text,
                                                   absl::string_view source) {
  auto error = [&](absl::string_view problem) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": permissions rule \"", text, "\": ", problem));
  };
  PermissionRule rule;
  rule.text = std::string(text);
  rule.source = std::string(source);
  absl::string_view rest = absl::StripAsciiWhitespace(text);
  if (rest.empty()) return error("an empty rule");
  size_t open = rest.find('(');
  absl::string_view tool = rest.substr(0, open);
  if (IsMcpRuleName(tool)) {
    if (open != absl::string_view::npos) {
      return error(absl::StrCat(
          "an MCP rule takes no pattern; write \"", tool,
          "\" alone (mcp__SERVER__TOOL for one tool, mcp__SERVER for every "
          "tool of the server)"));
    }
    rule.tool = std::string(tool);
    return rule;
  }
  const RuleName* name = FindRuleName(tool);
  if (name == nullptr) {
    return error(absl::StrCat("unknown tool \"", tool, "\" (one of ",
                              RuleNameList(),
                              ", or mcp__SERVER / mcp__SERVER__TOOL)"));
  }
  rule.tool = std::string(tool);
  if (open == absl::string_view::npos) return rule;
  if (rest.back() != ')') return error("no closing parenthesis at the end");
  absl::string_view pattern = rest.substr(open + 1, rest.size() - open - 2);
  if (absl::StripAsciiWhitespace(pattern).empty()) {
    return error(absl::StrCat("an empty pattern; write \"", tool,
                              "\" alone for every call"));
  }
  rule.any = false;
  if (name->target == RuleTarget::kCommand) {
    rule.pattern = std::string(absl::StripAsciiWhitespace(pattern));
    if (rule.pattern == "*") rule.any = true;
    return rule;
  }
  absl::string_view glob = pattern;
  while (absl::ConsumePrefix(&glob, "./")) {
  }
  if (absl::StartsWith(glob, "/")) {
    return error(
        "an absolute path; path rules are relative to the project root");
  }
  for (absl::string_view part : absl::StrSplit(glob, '/')) {
    if (part == "..") return error("\"..\" in a path rule");
  }
  rule.pattern = std::string(glob);
  if (rule.pattern == "*" || rule.pattern == "**") rule.any = true;
  return rule;
}

bool MatchCommandPattern(absl::string_view pattern, absl::string_view text) {
  // Greedy glob with backtracking to the last '*'.
  size_t p = 0, t = 0, star = absl::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != absl::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

namespace {

bool MatchComponents(const std::vector<std::string>& glob, size_t g,
                     const std::vector<absl::string_view>& path, size_t p) {
  if (g == glob.size()) return p == path.size();
  if (glob[g] == "**") {
    for (size_t skip = p; skip <= path.size(); ++skip) {
      if (MatchComponents(glob, g + 1, path, skip)) return true;
    }
    return false;
  }
  if (p == path.size()) return false;
  std::string component(path[p]);
  if (::fnmatch(glob[g].c_str(), component.c_str(), 0) != 0) return false;
  return MatchComponents(glob, g + 1, path, p + 1);
}

}  // namespace

bool MatchPathGlob(absl::string_view glob, absl::string_view path) {
  if (glob == "*" || glob == "**") return true;
  std::vector<std::string> parts = absl::StrSplit(glob, '/', absl::SkipEmpty());
  std::vector<absl::string_view> components;
  if (!path.empty()) components = absl::StrSplit(path, '/');
  return MatchComponents(parts, 0, components, 0);
}

absl::StatusOr<std::string> NormalizeRelativePath(absl::string_view path) {
  if (absl::StartsWith(path, "/")) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", path, "\" is an absolute path"));
  }
  if (path.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("a NUL byte in the path");
  }
  std::vector<absl::string_view> out;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      if (out.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("\"", path, "\" leads out of the project"));
      }
      out.pop_back();
      continue;
    }
    out.push_back(part);
  }
  return absl::StrJoin(out, "/");
}

}  // namespace garuda
