#include "lib/permissions/permissions.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace garuda {
namespace {

Permissions Make(std::vector<std::string> allow, std::vector<std::string> ask,
                 std::vector<std::string> deny) {
  PermissionSettings settings;
  for (auto& r : allow) settings.add_allow(r);
  for (auto& r : ask) settings.add_ask(r);
  for (auto& r : deny) settings.add_deny(r);
  Permissions permissions;
  absl::Status status = permissions.AddRules(settings, "settings.json");
  EXPECT_TRUE(status.ok()) << status;
  return permissions;
}

Verdict VerdictOf(const Permissions& p, const std::string& tool,
                  const std::string& argument) {
  return p.Decide({tool, argument}).verdict;
}

TEST(PermissionsTest, NoRules) {
  Permissions p;
  EXPECT_EQ(VerdictOf(p, "bash", "ls"), Verdict::kNoRule);
  EXPECT_EQ(VerdictOf(p, "edit_file", "src/a.cc"), Verdict::kNoRule);
}

TEST(PermissionsTest, AllowBashPattern) {
  Permissions p = Make({"bash(git status*)"}, {}, {});
  Decision d = p.Decide({"bash", "git status --short"});
  EXPECT_EQ(d.verdict, Verdict::kAllow);
  EXPECT_NE(
      d.reason.find("bash(git status*) (settings.json: permissions.allow)"),
      std::string::npos)
      << d.reason;
  EXPECT_EQ(VerdictOf(p, "bash", "git push"), Verdict::kNoRule);
}

TEST(PermissionsTest, BareToolAllowsEveryCall) {
  Permissions p = Make({"bash", "read_file"}, {}, {});
  EXPECT_EQ(VerdictOf(p, "bash", "rm -rf build && (cd x; make)"),
            Verdict::kAllow);
  EXPECT_EQ(VerdictOf(p, "read_file", "a/b"), Verdict::kAllow);
  EXPECT_EQ(VerdictOf(p, "edit_file", "a/b"), Verdict::kNoRule);
}

TEST(PermissionsTest, DenyWinsOverAskOverAllow) {
  Permissions p = Make({"bash", "edit_file(src/**)"}, {"bash(git push*)"},
                       {"bash(rm *)", "edit_file(src/gen/**)"});
  EXPECT_EQ(VerdictOf(p, "bash", "rm -rf x"), Verdict::kDeny);
  EXPECT_EQ(VerdictOf(p, "bash", "git push origin"), Verdict::kAsk);
  EXPECT_EQ(VerdictOf(p, "bash", "make"), Verdict::kAllow);
  EXPECT_EQ(VerdictOf(p, "edit_file", "src/gen/x.cc"), Verdict::kDeny);
  EXPECT_EQ(VerdictOf(p, "edit_file", "src/x.cc"), Verdict::kAllow);
  // Deny and ask rules see every part of a compound command.
  EXPECT_EQ(VerdictOf(p, "bash", "make && rm -rf /"), Verdict::kDeny);
  EXPECT_EQ(VerdictOf(p, "bash", "echo $(rm -rf x)"), Verdict::kDeny);
  EXPECT_EQ(VerdictOf(p, "bash", "make; git push"), Verdict::kAsk);
}

TEST(PermissionsTest, CompoundNeedsEveryPart) {
  Permissions p = Make({"bash(git status*)", "bash(ls*)"}, {}, {});
  Decision both = p.Decide({"bash", "git status && ls -la"});
  EXPECT_EQ(both.verdict, Verdict::kAllow);
  EXPECT_EQ(both.allowed_by.size(), 2u);
  // Negative controls: one part without a rule.
  for (const char* command :
       {"git status && rm -rf ~", "git status; curl x | sh",
        "git status $(rm -rf ~)", "git status `rm x`", "ls | sh",
        "git status & rm x", "git status\nrm x", "git status || rm x"}) {
    EXPECT_EQ(VerdictOf(p, "bash", command), Verdict::kNoRule) << command;
  }
}

TEST(PermissionsTest, UnsplittableNeverAllowedByAPattern) {
  Permissions p = Make({"bash(git status*)"}, {}, {});
  for (const char* command : {"git status > ~/.bashrc", "git status (x)",
                              "git status <<EOF", "git status 'unclosed"}) {
    Decision d = p.Decide({"bash", command});
    EXPECT_EQ(d.verdict, Verdict::kNoRule) << command;
    EXPECT_NE(d.reason.find("cannot be split safely"), std::string::npos)
        << d.reason;
  }
  // Control: the same prefix alone is allowed.
  EXPECT_EQ(VerdictOf(p, "bash", "git status 2>/dev/null"), Verdict::kAllow);
}

TEST(PermissionsTest, SensitiveEditsAlwaysAsk) {
  Permissions p = Make({"edit_file", "write_file(**)", "read_file"}, {}, {});
  EXPECT_EQ(VerdictOf(p, "edit_file", "src/a.cc"), Verdict::kAllow);
  Decision d = p.Decide({"edit_file", "config/.env"});
  EXPECT_EQ(d.verdict, Verdict::kAsk);
  EXPECT_NE(d.reason.find("sensitive"), std::string::npos);
  EXPECT_EQ(VerdictOf(p, "write_file", "deploy/server.pem"), Verdict::kAsk);
  EXPECT_EQ(VerdictOf(p, "write_file", ".aws/credentials"), Verdict::kAsk);
  // Reading is not an edit.
  EXPECT_EQ(VerdictOf(p, "read_file", "config/.env"), Verdict::kAllow);
  // A session answer does not lift it either.
  ASSERT_TRUE(p.RememberForSession("edit_file(config/.env)").ok());
  EXPECT_EQ(VerdictOf(p, "edit_file", "config/.env"), Verdict::kAsk);
  // A deny rule is still stronger.
  Permissions denied = Make({}, {}, {"write_file(**/*.pem)"});
  EXPECT_EQ(VerdictOf(denied, "write_file", "deploy/server.pem"),
            Verdict::kDeny);
}

TEST(PermissionsTest, SessionAnswers) {
  Permissions p = Make({}, {"bash(git push*)"}, {"bash(rm *)"});
  PermissionRequest make{"bash", "make test"};
  EXPECT_EQ(p.Decide(make).verdict, Verdict::kNoRule);
  std::optional<std::string> rule = Permissions::SessionRuleFor(make);
  ASSERT_TRUE(rule.has_value());
  EXPECT_EQ(*rule, "bash(make test)");
  ASSERT_TRUE(p.RememberForSession(*rule).ok());
  Decision d = p.Decide(make);
  EXPECT_EQ(d.verdict, Verdict::kAllow);
  EXPECT_NE(d.reason.find("this session"), std::string::npos);
  // Exactly that command, nothing wider.
  EXPECT_EQ(VerdictOf(p, "bash", "make test && make install"),
            Verdict::kNoRule);
  // A session answer cannot beat settings' deny or ask rules.
  ASSERT_TRUE(p.RememberForSession("bash").ok());
  EXPECT_EQ(VerdictOf(p, "bash", "rm -rf x"), Verdict::kDeny);
  EXPECT_EQ(VerdictOf(p, "bash", "git push"), Verdict::kAsk);
  // A new Permissions (a new session) remembers nothing.
  Permissions fresh = Make({}, {}, {});
  EXPECT_EQ(VerdictOf(fresh, "bash", "make test"), Verdict::kNoRule);
}

TEST(PermissionsTest, SessionRuleOffered) {
  EXPECT_FALSE(Permissions::SessionRuleFor({"bash", "a && b"}).has_value());
  EXPECT_FALSE(Permissions::SessionRuleFor({"bash", "rm *.o"}).has_value());
  EXPECT_FALSE(Permissions::SessionRuleFor({"bash", "ls > x"}).has_value());
  EXPECT_EQ(*Permissions::SessionRuleFor({"edit_file", "src/a.cc"}),
            "edit_file(src/a.cc)");
  EXPECT_FALSE(
      Permissions::SessionRuleFor({"edit_file", "src/.env"}).has_value());
}

TEST(PermissionsTest, BadRuleInSettingsNamesIt) {
  PermissionSettings settings;
  settings.add_deny("bash(rm *");
  Permissions p;
  absl::Status status = p.AddRules(settings, "/p/.garuda/settings.json");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("/p/.garuda/settings.json: permissions.deny"),
            std::string::npos)
      << status;
  EXPECT_NE(status.message().find("\"bash(rm *\""), std::string::npos);
}

TEST(LoadPermissionsTest, ProjectMayAddDenyAndAskButNotAllow) {
  SettingsSources sources;
  sources.user_settings.mutable_permissions()->add_allow("bash(make*)");
  sources.user_settings_path = "/home/u/.garuda/settings.json";
  PermissionSettings* project = sources.project_settings.mutable_permissions();
  project->add_allow("bash");
  project->add_allow("edit_file");
  project->add_deny("bash(make install*)");
  project->add_ask("edit_file(Makefile)");
  sources.project_settings_path = "/p/.garuda/settings.json";
  absl::StatusOr<LoadedPermissions> loaded = LoadPermissions(sources);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const Permissions& p = loaded->permissions;
  EXPECT_EQ(VerdictOf(p, "bash", "make test"), Verdict::kAllow);
  EXPECT_EQ(VerdictOf(p, "bash", "make install"), Verdict::kDeny);
  EXPECT_EQ(VerdictOf(p, "edit_file", "Makefile"), Verdict::kAsk);
  // The project's own allow rules did not count.
  EXPECT_EQ(VerdictOf(p, "bash", "curl x"), Verdict::kNoRule);
  EXPECT_EQ(VerdictOf(p, "edit_file", "src/a.c"), Verdict::kNoRule);
  ASSERT_EQ(loaded->notices.size(), 1u);
  EXPECT_NE(loaded->notices[0].find("/p/.garuda/settings.json: "
                                    "permissions.allow is ignored"),
            std::string::npos)
      << loaded->notices[0];
  // A bad rule names its file.
  sources.user_policy.mutable_permissions()->add_deny("nope(x)");
  sources.user_policy_path = "/home/u/.garuda/policy.json";
  absl::StatusOr<LoadedPermissions> bad = LoadPermissions(sources);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("/home/u/.garuda/policy.json"),
            std::string::npos);
}

// An MCP call as lib/agent/mcp_servers.cc asks: the tool's rule and its
// server's.
PermissionRequest McpCall(const std::string& server, const std::string& tool) {
  PermissionRequest request;
  request.tool = absl::StrCat("mcp__", server, "__", tool);
  request.server_rule = absl::StrCat("mcp__", server);
  return request;
}

TEST(McpRulesTest, ToolRuleAndServerRule) {
  Permissions p = Make({"mcp__fs__read_text_file", "mcp__everything"},
                       {"mcp__fs__list_directory"}, {"mcp__fs__write_file"});
  EXPECT_EQ(p.Decide(McpCall("fs", "read_text_file")).verdict, Verdict::kAllow);
  EXPECT_EQ(p.Decide(McpCall("fs", "list_directory")).verdict, Verdict::kAsk);
  EXPECT_EQ(p.Decide(McpCall("fs", "write_file")).verdict, Verdict::kDeny);
  // Another tool of the server: no rule (the caller asks).
  EXPECT_EQ(p.Decide(McpCall("fs", "move_file")).verdict, Verdict::kNoRule);
  // The server rule covers every tool of that server, and no other's.
  EXPECT_EQ(p.Decide(McpCall("everything", "echo")).verdict, Verdict::kAllow);
  EXPECT_EQ(p.Decide(McpCall("everything2", "echo")).verdict, Verdict::kNoRule);
  // Negative control: without its server rule in the request, the server's
  // allow rule does not reach the tool (the rule is matched on the server,
  // not on a prefix of the name).
  PermissionRequest bare = McpCall("everything", "echo");
  bare.server_rule.clear();
  EXPECT_EQ(p.Decide(bare).verdict, Verdict::kNoRule);
}

TEST(McpRulesTest, ServerDenyWinsOverToolAllow) {
  Permissions p = Make({"mcp__fs__read_text_file"}, {}, {"mcp__fs"});
  EXPECT_EQ(p.Decide(McpCall("fs", "read_text_file")).verdict, Verdict::kDeny);
}

TEST(McpRulesTest, ServerNameWithUnderscores) {
  // "mcp__a" must not decide a server named "a__b".
  Permissions p = Make({}, {}, {"mcp__a"});
  EXPECT_EQ(p.Decide(McpCall("a__b", "t")).verdict, Verdict::kNoRule);
  EXPECT_EQ(p.Decide(McpCall("a", "b__t")).verdict, Verdict::kDeny);
}

TEST(McpRulesTest, RulesTakeNoPattern) {
  Permissions p;
  absl::Status status = p.AddRule(Verdict::kAllow, "mcp__fs(*)", "s.json");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("an MCP rule takes no pattern"),
            std::string::npos)
      << status;
  EXPECT_FALSE(p.AddRule(Verdict::kAllow, "mcp__", "s.json").ok());
  EXPECT_FALSE(p.AddRule(Verdict::kAllow, "mcp__a b", "s.json").ok());
  EXPECT_TRUE(p.AddRule(Verdict::kAllow, "mcp__a-b__c_d", "s.json").ok());
}

TEST(McpRulesTest, SessionAnswerCoversTheOneTool) {
  PermissionRequest call = McpCall("fs", "read_text_file");
  std::optional<std::string> rule = Permissions::SessionRuleFor(call);
  ASSERT_TRUE(rule.has_value());
  EXPECT_EQ(*rule, "mcp__fs__read_text_file");
  Permissions p;
  ASSERT_TRUE(p.RememberForSession(*rule).ok());
  EXPECT_EQ(p.Decide(call).verdict, Verdict::kAllow);
  EXPECT_EQ(p.Decide(McpCall("fs", "write_file")).verdict, Verdict::kNoRule);
}

TEST(McpRulesTest, ProjectCannotAllowButUserCan) {
  SettingsSources sources;
  sources.project_settings.mutable_permissions()->add_allow("mcp__fs");
  sources.project_settings_path = "/p/.garuda/settings.json";
  absl::StatusOr<LoadedPermissions> loaded = LoadPermissions(sources);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->permissions.Decide(McpCall("fs", "write_file")).verdict,
            Verdict::kNoRule);
  ASSERT_EQ(loaded->notices.size(), 1u);
  // Negative control: the same rule in the person's settings allows.
  sources.user_settings.mutable_permissions()->add_allow("mcp__fs");
  loaded = LoadPermissions(sources);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ(loaded->permissions.Decide(McpCall("fs", "write_file")).verdict,
            Verdict::kAllow);
}

}  // namespace
}  // namespace garuda
