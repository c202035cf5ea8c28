#include "lib/policy/sources.h"

#include <cstdlib>

#include "gtest/gtest.h"
#include "lib/base/files.h"

namespace garuda {
namespace {

class SourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "srcXXXXXX");
    root_ = ::mkdtemp(templ.data());
    locations_.managed_dir = JoinPath(root_, "etc");
    locations_.home = JoinPath(root_, "home");
    locations_.project = JoinPath(root_, "project");
  }
  void Write(const std::string& path, const std::string& text) {
    ASSERT_TRUE(MakeDirectories(Dirname(path), 0700).ok());
    ASSERT_TRUE(WriteFileAtomically(path, text, 0600).ok());
  }
  std::string root_;
  SettingsLocations locations_;
};

TEST_F(SourcesTest, MissingFilesAreEmptySources) {
  auto sources = LoadSettingsSources(locations_);
  ASSERT_TRUE(sources.ok()) << sources.status();
  EXPECT_EQ(sources->managed_policy.profile(), "");
  EXPECT_EQ(sources->project_settings_path, "");
}

TEST_F(SourcesTest, ReadsEachSource) {
  Write(JoinPath(locations_.managed_dir, "policy.json"),
        R"({"profile":"strict"})");
  Write(JoinPath(locations_.home, ".garuda/policy.json"),
        R"({"audit":{"checkpoint":true}})");
  Write(JoinPath(locations_.project, ".garuda/settings.json"),
        R"({"commands":{"mode":"staged"}})");
  auto sources = LoadSettingsSources(locations_);
  ASSERT_TRUE(sources.ok()) << sources.status();
  EXPECT_EQ(sources->managed_policy.profile(), "strict");
  EXPECT_TRUE(sources->user_policy.audit().checkpoint());
  EXPECT_EQ(sources->project_settings.commands().mode(), "staged");
  EXPECT_NE(sources->project_settings_path, "");
}

TEST_F(SourcesTest, BadFileStopsTheLoadAndNamesIt) {
  std::string path = JoinPath(locations_.home, ".garuda/policy.json");
  Write(path, R"({"audit":{"checkpoint":"on"}})");
  auto sources = LoadSettingsSources(locations_);
  ASSERT_FALSE(sources.ok());
  EXPECT_NE(sources.status().message().find(path), absl::string_view::npos);
  EXPECT_NE(sources.status().message().find("audit.checkpoint"),
            absl::string_view::npos)
      << sources.status();
}

}  // namespace
}  // namespace garuda
