#include "lib/agent/settings.h"

#include "gtest/gtest.h"
#include "lib/base/json_message.h"

namespace garuda {
namespace agent {
namespace {

class SessionSettingsTest : public ::testing::Test {
 protected:
  SessionSettingsTest() {
    sources_.user_settings_path = "/home/u/.garuda/settings.json";
    sources_.project_settings_path = "/p/.garuda/settings.json";
  }
  void Set(Settings* settings, const std::string& json) {
    ASSERT_TRUE(ParseJsonMessage(json, "test", settings).ok());
  }
  SettingsSources sources_;
};

// A wrong MCP server stops the session at once, naming the file, the
// server and the field; the control: the same server written right.
TEST_F(SessionSettingsTest, AWrongMcpServerStopsTheLoad) {
  Set(&sources_.project_settings,
      R"({"mcpServers": {"tracker": {"url": "http://tracker.example/mcp"}}})");
  absl::StatusOr<SessionSettings> loaded = LoadSessionSettings(sources_);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message().find(
                "/p/.garuda/settings.json: mcpServers.tracker.url: "),
            0u)
      << loaded.status();
  Set(&sources_.project_settings,
      R"({"mcpServers": {"tracker": {"url": "https://tracker.example/mcp"}}})");
  EXPECT_TRUE(LoadSessionSettings(sources_).ok());
}

TEST_F(SessionSettingsTest, AServerDefinedTwiceIsANotice) {
  Set(&sources_.user_settings, R"({"mcpServers": {"x": {"command": "a"}}})");
  Set(&sources_.project_settings, R"({"mcpServers": {"x": {"command": "b"}}})");
  absl::StatusOr<SessionSettings> loaded = LoadSessionSettings(sources_);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->notices.size(), 1u);
  EXPECT_NE(loaded->notices[0].find("MCP server \"x\" is ignored"),
            std::string::npos);
}

}  // namespace
}  // namespace agent
}  // namespace garuda
