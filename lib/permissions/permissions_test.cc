#include "lib/permissions/permissions.h"

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

}  // namespace
}  // namespace garuda
