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

  ASSERT_EQ(plan.start.size(), 3u);
  const McpServer& files = plan.start[1];
  EXPECT_EQ(files.name(), "files");
  EXPECT_EQ(files.source(), McpServer::EDITOR);
  EXPECT_EQ(files.definition().command(), "node");
  ASSERT_EQ(files.definition().args_size(), 2);
  EXPECT_EQ(files.definition().env().at("LOG"), "warn");
  EXPECT_EQ(files.definition_sha256().size(), 64u);

  const McpServer& remote = plan.start[2];
  EXPECT_EQ(remote.name(), "remote");
  EXPECT_EQ(remote.definition().url(), "https://x.example/mcp");
  ASSERT_EQ(remote.definition().allowed_domains_size(), 1);
  EXPECT_EQ(remote.definition().allowed_domains(0), "x.example");

  ASSERT_EQ(plan.skipped.size(), 3u);
  EXPECT_EQ(plan.skipped[0].server.name(), "bad name!");
  EXPECT_EQ(plan.skipped[1].server.name(), "settings");
  EXPECT_TRUE(absl::StrContains(plan.skipped[1].why, "the settings define"));
  EXPECT_EQ(plan.skipped[2].server.name(), "noprogram");
}

// ACP has no allowedDomains: an editor's remote server reaches its own url's
// host only, with its headers; what is not https (or loopback http), or not a
// transport we speak, is skipped with why.
TEST(EditorMcpServersTest, RemoteServersReachTheirOwnHostOnly) {
  google::protobuf::Value servers = Parse(R"([
    {"name": "tracker", "type": "http", "url": "https://MCP.Tracker.example:8443/v1",
     "headers": [{"name": "Authorization", "value": "Bearer t"}]},
    {"name": "plain", "type": "http", "url": "http://tracker.example/mcp",
     "headers": []},
    {"name": "old", "type": "sse", "url": "https://x.example/sse"},
    {"name": "nohost", "type": "http", "url": "https:///mcp", "headers": []}
  ])");
  McpServerPlan plan;
  AddEditorMcpServers(&servers, &plan);

  ASSERT_EQ(plan.start.size(), 1u);
  const McpServerSettings& d = plan.start[0].definition();
  EXPECT_EQ(d.type(), "http");
  ASSERT_EQ(d.allowed_domains_size(), 1);
  EXPECT_EQ(d.allowed_domains(0), "mcp.tracker.example");
  EXPECT_EQ(d.headers().at("Authorization"), "Bearer t");
  EXPECT_EQ(plan.start[0].definition_sha256().size(), 64u);

  ASSERT_EQ(plan.skipped.size(), 3u);
  EXPECT_EQ(plan.skipped[0].server.name(), "plain");
  EXPECT_TRUE(absl::StrContains(plan.skipped[0].why, "url"));
  EXPECT_EQ(plan.skipped[1].server.name(), "old");
  EXPECT_TRUE(absl::StrContains(plan.skipped[1].why, "sse"));
  EXPECT_EQ(plan.skipped[2].server.name(), "nohost");
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
