#include "lib/permissions/rules.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace garuda {
namespace {

TEST(ParsePermissionRuleTest, Forms) {
  absl::StatusOr<PermissionRule> bare = ParsePermissionRule("bash", "s.json");
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare->tool, "bash");
  EXPECT_TRUE(bare->any);

  absl::StatusOr<PermissionRule> command =
      ParsePermissionRule("bash(git status*)", "s.json");
  ASSERT_TRUE(command.ok());
  EXPECT_FALSE(command->any);
  EXPECT_EQ(command->pattern, "git status*");

  absl::StatusOr<PermissionRule> path =
      ParsePermissionRule("edit_file(./src/**)", "s.json");
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(path->pattern, "src/**");

  absl::StatusOr<PermissionRule> all = ParsePermissionRule("read_file(*)", "s");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->any);
}

TEST(ParsePermissionRuleTest, ErrorsNameFileAndRule) {
  struct Case {
    const char* rule;
    const char* problem;
  };
  for (const Case& c :
       {Case{"bash(git status", "no closing parenthesis"},
        Case{"shell(ls)", "unknown tool \"shell\""},
        Case{"bash()", "an empty pattern"}, Case{"", "an empty rule"},
        Case{"edit_file(/etc/passwd)", "an absolute path"},
        Case{"read_file(../x)", "\"..\""}}) {
    absl::StatusOr<PermissionRule> rule =
        ParsePermissionRule(c.rule, "/home/u/.garuda/settings.json");
    ASSERT_FALSE(rule.ok()) << c.rule;
    std::string message(rule.status().message());
    EXPECT_NE(message.find("/home/u/.garuda/settings.json"), std::string::npos)
        << message;
    EXPECT_NE(message.find(absl::StrCat("\"", c.rule, "\"")), std::string::npos)
        << message;
    EXPECT_NE(message.find(c.problem), std::string::npos) << message;
  }
}

TEST(MatchCommandPatternTest, Star) {
  EXPECT_TRUE(MatchCommandPattern("git status*", "git status"));
  EXPECT_TRUE(MatchCommandPattern("git status*", "git status --short src/"));
  EXPECT_FALSE(MatchCommandPattern("git status*", "git push"));
  EXPECT_FALSE(MatchCommandPattern("git status", "git status --short"));
  EXPECT_TRUE(
      MatchCommandPattern("npm run * --silent", "npm run a b --silent"));
  EXPECT_FALSE(MatchCommandPattern("npm run * --silent", "npm run a"));
  EXPECT_TRUE(MatchCommandPattern("*", ""));
}

TEST(MatchPathGlobTest, Components) {
  EXPECT_TRUE(MatchPathGlob("src/**", "src/a/b.cc"));
  EXPECT_TRUE(MatchPathGlob("src/**", "src/a.cc"));
  EXPECT_FALSE(MatchPathGlob("src/**", "lib/a.cc"));
  EXPECT_FALSE(MatchPathGlob("src/*", "src/a/b.cc"));
  EXPECT_TRUE(MatchPathGlob("src/*", "src/a.cc"));
  EXPECT_TRUE(MatchPathGlob("**/*.cc", "a.cc"));
  EXPECT_TRUE(MatchPathGlob("**/*.cc", "x/y/a.cc"));
  EXPECT_FALSE(MatchPathGlob("**/*.cc", "x/y/a.h"));
  EXPECT_TRUE(MatchPathGlob("README.md", "README.md"));
  EXPECT_FALSE(MatchPathGlob("README.md", "docs/README.md"));
  EXPECT_TRUE(MatchPathGlob("*", ""));
  EXPECT_FALSE(MatchPathGlob("src/**", ""));
}

TEST(NormalizeRelativePathTest, Cases) {
  EXPECT_EQ(*NormalizeRelativePath("a/./b/../c"), "a/c");
  EXPECT_EQ(*NormalizeRelativePath("."), "");
  EXPECT_EQ(*NormalizeRelativePath("a//b/"), "a/b");
  EXPECT_FALSE(NormalizeRelativePath("../x").ok());
  EXPECT_FALSE(NormalizeRelativePath("a/../../x").ok());
  EXPECT_FALSE(NormalizeRelativePath("/etc/passwd").ok());
}

}  // namespace
}  // namespace garuda
