#include "lib/base/home.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/base/sha256.h"

namespace garuda {
namespace {

std::string TempFolder(const std::string& name) {
  std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  ::mkdir(path.c_str(), 0700);
  return path;
}

TEST(SessionIdTest, OneRuleForEveryProgram) {
  EXPECT_TRUE(CheckSessionId("abc-1.2_x").ok());
  EXPECT_TRUE(CheckSessionId(std::string(128, 'a')).ok());
  for (const char* bad :
       {"", ".", "..", ".hidden", "a/b", "../x", "a b", "é"}) {
    EXPECT_FALSE(CheckSessionId(bad).ok()) << bad;
  }
  EXPECT_FALSE(CheckSessionId(std::string(129, 'a')).ok());
  EXPECT_TRUE(absl::StrContains(CheckSessionId("a/b").message(), "\"a/b\""));
}

TEST(GarudaFolderTest, TheFilesOnDiskTable) {
  EXPECT_EQ(GarudaAuditRoot("/h"), "/h/.garuda/audit");
  EXPECT_EQ(GarudaStagingRoot("/h"), "/h/.garuda/staging");
  EXPECT_EQ(GarudaUndoRoot("/h"), "/h/.garuda/undo");
  EXPECT_EQ(*GarudaSessionFolder("/h", "abc-1.2_x"),
            "/h/.garuda/sessions/abc-1.2_x");
  EXPECT_FALSE(GarudaSessionFolder("/h", "..").ok());
  EXPECT_EQ(SessionJournalFile("/s"), "/s/journal.jsonl");
  EXPECT_EQ(BudgetJournalFile("/s"), "/s/budget.jsonl");
  EXPECT_EQ(ManagedPolicyFile(kManagedPolicyFolder), "/etc/garuda/policy.json");
  EXPECT_EQ(UserPolicyFile("/h"), "/h/.garuda/policy.json");
  EXPECT_EQ(UserSettingsFile("/h"), "/h/.garuda/settings.json");
  EXPECT_EQ(ProjectSettingsFile("/p"), "/p/.garuda/settings.json");
  EXPECT_EQ(UserInstructionsFile("/h"), "/h/.garuda/AGENTS.md");
  EXPECT_EQ(ProjectJobFile("/p", "lint"), "/p/.garuda/jobs/lint.json");
}

TEST(ProjectKeyTest, NameThenHashOfTheRealPath) {
  EXPECT_EQ(ProjectKey("/work/my app"),
            "my_app-" + Sha256Hex("/work/my app").substr(0, 16));
  EXPECT_EQ(ProjectKey("/work/.hidden"),
            "_hidden-" + Sha256Hex("/work/.hidden").substr(0, 16));
  EXPECT_TRUE(absl::StartsWith(ProjectKey("/"), "root-"));
  EXPECT_EQ(ProjectKey("/a/" + std::string(100, 'x')).size(), 64 + 1 + 16u);
  EXPECT_NE(ProjectKey("/a/app"), ProjectKey("/b/app"));
}

TEST(RealProjectRootTest, ALinkAndTheFolderGiveOneKey) {
  std::string real = TempFolder("project");
  std::string link = std::string(std::getenv("TEST_TMPDIR")) + "/link";
  ::unlink(link.c_str());
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  absl::StatusOr<std::string> through_link = RealProjectRoot(link);
  absl::StatusOr<std::string> direct = RealProjectRoot(real);
  ASSERT_TRUE(through_link.ok()) << through_link.status();
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(ProjectKey(*through_link), ProjectKey(*direct));
  // Negative control: the link's own path, unresolved, is another key.
  EXPECT_NE(ProjectKey(link), ProjectKey(*direct));
  absl::StatusOr<std::string> missing = RealProjectRoot(real + "/nothing");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "nothing"));
}

}  // namespace
}  // namespace garuda
