#include "lib/policy/mcp_servers.h"

#include <cstdlib>

#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"

namespace garuda {
namespace {

class McpServersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "mcpXXXXXX");
    project_ = ::mkdtemp(templ.data());
    sources_.managed_policy_path = "/etc/garuda/policy.json";
    sources_.user_policy_path = "/home/u/.garuda/policy.json";
    sources_.user_settings_path = "/home/u/.garuda/settings.json";
    sources_.project_settings_path = "/p/.garuda/settings.json";
  }
  // Parsed as the real files are: the settings parser decides the fields.
  absl::Status Set(Settings* settings, const std::string& json) {
    return ParseJsonMessage(json, "settings.json", settings);
  }
  void WriteMcpJson(const std::string& text) {
    ASSERT_TRUE(
        WriteFileAtomically(JoinPath(project_, ".mcp.json"), text, 0600).ok());
  }
  McpServerSources Collect() {
    absl::StatusOr<McpServerSources> collected =
        CollectMcpServers(sources_, project_);
    EXPECT_TRUE(collected.ok()) << collected.status();
    return collected.ok() ? *collected : McpServerSources();
  }
  absl::Status CollectError() {
    return CollectMcpServers(sources_, project_).status();
  }

  std::string project_;
  SettingsSources sources_;
};

TEST_F(McpServersTest, TheShapeOtherAgentsWriteIsRead) {
  ASSERT_TRUE(Set(&sources_.user_settings, R"({"mcpServers": {
    "files": {"command": "npx", "args": ["-y", "server-filesystem", "."],
              "env": {"LOG": "1"}, "cwd": "tools",
              "allowedDomains": ["registry.npmjs.org"],
              "writeScope": ["out"], "callTimeoutMs": 5000},
    "remote": {"type": "http", "url": "https://mcp.example.com/mcp",
               "headers": {"Authorization": "Bearer x"}}}})")
                  .ok());
  McpServerSources collected = Collect();
  ASSERT_EQ(collected.servers.size(), 2u);
  const McpServer& files = collected.servers[0];
  EXPECT_EQ(files.name(), "files");
  EXPECT_EQ(files.source(), McpServer::USER);
  EXPECT_EQ(files.source_file(), "/home/u/.garuda/settings.json");
  EXPECT_EQ(files.definition().args_size(), 3);
  EXPECT_EQ(files.definition().env().at("LOG"), "1");
  EXPECT_EQ(files.definition().call_timeout_ms(), 5000u);
  EXPECT_EQ(McpTransport(files.definition()), "stdio");
  EXPECT_EQ(files.definition_sha256().size(), 64u);
  EXPECT_EQ(McpTransport(collected.servers[1].definition()), "http");
}

TEST_F(McpServersTest, AnUnknownFieldNamesTheFileTheServerAndTheField) {
  absl::Status status = Set(&sources_.user_settings,
                            R"({"mcpServers": {"files": {"comand": "x"}}})");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "settings.json: unknown field \"mcpServers.files.comand\"");
}

TEST_F(McpServersTest, AWrongDefinitionNamesTheFileTheServerAndTheField) {
  struct Case {
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {R"({"a": {"args": ["x"]}})",
       "mcpServers.a.command: a stdio server needs the program to start"},
      {R"({"a": {"command": "x", "url": "https://h/"}})",
       "mcpServers.a.url: a server is either local (command) or remote "
       "(url), not both"},
      {R"({"a": {"url": "http://example.com/mcp"}})",
       "mcpServers.a.url: \"http://example.com/mcp\" is not https:// "
       "(http:// only for 127.0.0.1, localhost or [::1])"},
      {R"({"a": {"url": "https://h/", "env": {"X": "1"}}})",
       "mcpServers.a.env: only a local server (command) has it"},
      {R"({"a": {"type": "sse", "url": "https://h/sse"}})",
       "mcpServers.a.type: \"sse\" is the transport"},
      {R"({"a": {"command": "x", "env": {"1X": "1"}}})",
       "mcpServers.a.env.1X: not a variable name"},
      {R"({"a": {"command": "x", "writeScope": ["../up"]}})",
       "mcpServers.a.writeScope[0]: "},
      {R"({"a": {"command": "x", "allowedDomains": ["http://x"]}})",
       "mcpServers.a.allowedDomains[0]: \"http://x\": "},
      {R"({"a b": {"command": "x"}})",
       "mcpServers.a b: a server's name is made of letters"},
      {R"({"a": {"command": "x", "cwd": "../elsewhere"}})",
       "mcpServers.a.cwd: "},
      {R"({"a": {"command": "x", "cwd": "/p/../etc"}})",
       "mcpServers.a.cwd: "},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    ASSERT_TRUE(Set(&sources_.user_policy,
                    absl::StrCat(R"({"mcpServers": )", c.json, "}"))
                    .ok());
    absl::Status status = CollectError();
    ASSERT_FALSE(status.ok());
    EXPECT_EQ(status.message().find(
                  absl::StrCat("/home/u/.garuda/policy.json: ", c.message)),
              0u)
        << status;
  }
}

TEST_F(McpServersTest, ThePersonsDefinitionWinsOverTheProjectsOfTheSameName) {
  ASSERT_TRUE(
      Set(&sources_.user_settings, R"({"mcpServers": {"x": {"command": "a"}}})")
          .ok());
  ASSERT_TRUE(Set(&sources_.project_settings,
                  R"({"mcpServers": {"x": {"command": "evil"},
                                     "y": {"command": "b"}}})")
                  .ok());
  WriteMcpJson(R"({"mcpServers": {"z": {"command": "c"}}})");
  McpServerSources collected = Collect();
  ASSERT_EQ(collected.servers.size(), 3u);
  EXPECT_EQ(collected.servers[0].definition().command(), "a");
  EXPECT_EQ(collected.servers[1].name(), "y");
  EXPECT_EQ(collected.servers[1].source(), McpServer::PROJECT);
  EXPECT_EQ(collected.servers[2].name(), "z");
  EXPECT_EQ(collected.servers[2].source_file(),
            JoinPath(project_, ".mcp.json"));
  ASSERT_EQ(collected.notices.size(), 1u);
  EXPECT_EQ(collected.notices[0],
            "/p/.garuda/settings.json: MCP server \"x\" is ignored: "
            "/home/u/.garuda/settings.json defines a server of that name "
            "first");
}

TEST_F(McpServersTest, AnUnreadableMcpJsonSkipsItsServersWithTheReason) {
  WriteMcpJson(R"({"mcpServers": {"ok": {"command": "a"},
                                  "bad": {"command": "b", "alwaysAllow": []}}})");
  McpServerSources collected = Collect();
  EXPECT_TRUE(collected.servers.empty());
  EXPECT_NE(collected.project_file_problem.find("alwaysAllow"),
            std::string::npos)
      << collected.project_file_problem;
  // The control: the same file without the field we do not know.
  WriteMcpJson(R"({"mcpServers": {"ok": {"command": "a"}}})");
  EXPECT_EQ(Collect().servers.size(), 1u);
}

TEST_F(McpServersTest, PolicyForbidsProjectServersAndAProjectCannotUndoIt) {
  ASSERT_TRUE(
      Set(&sources_.user_policy, R"({"mcp": {"projectServers": false}})").ok());
  ASSERT_TRUE(
      Set(&sources_.project_settings, R"({"mcp": {"projectServers": true}})")
          .ok());
  McpServerSources collected = Collect();
  EXPECT_EQ(collected.project_servers_forbidden_by,
            "/home/u/.garuda/policy.json");
  ASSERT_EQ(collected.notices.size(), 1u);
  EXPECT_NE(collected.notices[0].find("mcp.projectServers is ignored"),
            std::string::npos);
}

TEST_F(McpServersTest, TheDigestFollowsTheDefinitionNotItsOrder) {
  McpServerSettings a, b;
  ASSERT_TRUE(ParseJsonMessage(
                  R"({"command": "x", "env": {"A": "1", "B": "2"}})", "a", &a)
                  .ok());
  ASSERT_TRUE(ParseJsonMessage(
                  R"({"env": {"B": "2", "A": "1"}, "command": "x"})", "b", &b)
                  .ok());
  EXPECT_EQ(McpDefinitionSha256("s", a), McpDefinitionSha256("s", b));
  EXPECT_NE(McpDefinitionSha256("s", a), McpDefinitionSha256("t", a));
  b.add_args("--more");
  EXPECT_NE(McpDefinitionSha256("s", a), McpDefinitionSha256("s", b));
}

}  // namespace
}  // namespace garuda
