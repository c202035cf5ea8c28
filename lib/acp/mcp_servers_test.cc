// An editor's mcpServers become the session's servers, checked as a
// settings file's are; what cannot be started is skipped with why.
#include "lib/acp/mcp_servers.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/provider/json.h"

namespace garuda {
namespace acp {
namespace {

google::protobuf::Value Parse(const char* json) {
  absl::StatusOr<google::protobuf::Value> value =
      provider::ParseJson(json, "test");
  EXPECT_TRUE(value.ok()) << value.status();
  return *value;
}

TEST(EditorMcpServersTest, StdioServersStartAsSettingsOnesDo) {
  google::protobuf::Value servers = Parse(R"([
    {"name": "files", "command": "node", "args": ["fs.js", "."],
     "env": [{"name": "LOG", "value": "warn"}]},
    {"name": "remote", "type": "http", "url": "https://x.example/mcp",
     "headers": []},
    {"name": "bad name!", "command": "x"},
    {"name": "settings", "command": "other"},
    {"name": "noprogram", "args": []}
  ])");
  McpServerPlan plan;
  McpServer from_settings;
  from_settings.set_name("settings");
  plan.start.push_back(from_settings);
  AddEditorMcpServers(&servers, &plan);

  ASSERT_EQ(plan.start.size(), 2u);
  const McpServer& files = plan.start[1];
  EXPECT_EQ(files.name(), "files");
  EXPECT_EQ(files.source(), McpServer::EDITOR);
  EXPECT_EQ(files.definition().command(), "node");
  ASSERT_EQ(files.definition().args_size(), 2);
  EXPECT_EQ(files.definition().env().at("LOG"), "warn");
  EXPECT_EQ(files.definition_sha256().size(), 64u);

  ASSERT_EQ(plan.skipped.size(), 4u);
  EXPECT_EQ(plan.skipped[0].server.name(), "remote");
  EXPECT_TRUE(absl::StrContains(plan.skipped[0].why, "remote (http)"));
  EXPECT_EQ(plan.skipped[1].server.name(), "bad name!");
  EXPECT_EQ(plan.skipped[2].server.name(), "settings");
  EXPECT_TRUE(absl::StrContains(plan.skipped[2].why, "the settings define"));
  EXPECT_EQ(plan.skipped[3].server.name(), "noprogram");
}

TEST(EditorMcpServersTest, NoListNoServers) {
  McpServerPlan plan;
  AddEditorMcpServers(nullptr, &plan);
  google::protobuf::Value empty = Parse("[]");
  AddEditorMcpServers(&empty, &plan);
  EXPECT_TRUE(plan.start.empty());
  EXPECT_TRUE(plan.skipped.empty());
}

}  // namespace
}  // namespace acp
}  // namespace garuda
