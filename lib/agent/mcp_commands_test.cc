#include "lib/agent/mcp_commands.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace garuda {
namespace agent {
namespace {

// Servers as views only: no client is ever ready, so a reading command
// gets the servers' answer for a missing client.
class FakeAccess : public McpServerAccess {
 public:
  std::vector<McpServerView> Servers() const override { return views; }
  absl::Status Restart(const std::string& name) override {
    restarted.push_back(name);
    return restart;
  }
  absl::StatusOr<std::string> WithClient(
      const std::string& name,
      absl::FunctionRef<absl::StatusOr<std::string>(mcp::Client&)>) override {
    asked.push_back(name);
    return absl::FailedPreconditionError(
        absl::StrCat("the MCP server ", name, " is failed"));
  }

  std::vector<McpServerView> views;
  absl::Status restart;
  std::vector<std::string> restarted;
  std::vector<std::string> asked;
};

McpServerView Ready() {
  McpServerView view;
  view.name = "files";
  view.origin = "~/.garuda/settings.json";
  view.sandbox = "sandbox (staged view, network: none)";
  view.state = McpState::kReady;
  view.restarts = 1;
  view.server = "demo-files 1.2";
  view.protocol = "2025-06-18";
  view.tools.push_back({"mcp__files__read", "read", "mcp__files__read",
                        /*read_only_hint=*/true, true});
  view.tools.push_back({"mcp__files__write", "write", "mcp__files__write",
                        /*read_only_hint=*/false, true});
  view.problems.push_back("the tool odd is not offered: its schema");
  return view;
}

TEST(McpCommandsTest, NoServersSaysWhereTheyAreSet) {
  FakeAccess access;
  McpCommands commands(&access);
  EXPECT_EQ(commands.Command(""),
            "No MCP servers in this session (mcpServers in "
            "~/.garuda/settings.json; docs/mcp.md).");
}

TEST(McpCommandsTest, ListsEachServerFromItsView) {
  FakeAccess access;
  access.views.push_back(Ready());
  McpServerView failed;
  failed.name = "broken";
  failed.state = McpState::kFailed;
  failed.last_error = "nothing can start it";
  access.views.push_back(failed);
  McpCommands commands(&access);
  EXPECT_EQ(commands.Command("  "),
            "files: ready | from ~/.garuda/settings.json | sandbox (staged "
            "view, network: none) | demo-files 1.2 (MCP 2025-06-18) | "
            "restarted 1x\n"
            "  tools (2): read (read-only hint), write\n"
            "  the tool odd is not offered: its schema\n"
            "broken: failed\n"
            "  last error: nothing can start it");
}

TEST(McpCommandsTest, RestartSaysWhyItFailed) {
  FakeAccess access;
  access.restart = absl::NotFoundError("no MCP server named nobody");
  McpCommands commands(&access);
  EXPECT_EQ(commands.Command("restart nobody"),
            "The MCP server nobody did not restart: no MCP server named "
            "nobody");
  EXPECT_EQ(access.restarted, std::vector<std::string>{"nobody"});
}

TEST(McpCommandsTest, RestartListsTheServersAfter) {
  FakeAccess access;
  access.views.push_back(Ready());
  McpCommands commands(&access);
  std::string text = commands.Command("restart files");
  EXPECT_TRUE(absl::StartsWith(text, "Restarted. files: ready")) << text;
}

TEST(McpCommandsTest, ReadingAsksForTheNamedServersClient) {
  FakeAccess access;
  McpCommands commands(&access);
  EXPECT_EQ(commands.Command("resources files"),
            "the MCP server files is failed");
  EXPECT_EQ(commands.Command("read docs demo://a"),
            "the MCP server docs is failed");
  EXPECT_EQ(commands.Command("prompts p"), "the MCP server p is failed");
  EXPECT_EQ(commands.Command("prompt q greet name=Ann"),
            "the MCP server q is failed");
  EXPECT_EQ(access.asked,
            (std::vector<std::string>{"files", "docs", "p", "q"}));
}

TEST(McpCommandsTest, PromptArgumentsMustBeNamed) {
  FakeAccess access;
  McpCommands commands(&access);
  std::string text = commands.Command("prompt files greet Ann");
  EXPECT_TRUE(absl::StartsWith(text, "/mcp prompt: \"Ann\" is not ARG=VALUE."))
      << text;
  EXPECT_TRUE(access.asked.empty());
}

TEST(McpCommandsTest, OtherWordsGetTheUsage) {
  FakeAccess access;
  McpCommands commands(&access);
  for (const char* arguments : {"start files", "restart", "read files"}) {
    EXPECT_TRUE(absl::StartsWith(commands.Command(arguments),
                                 "/mcp: the servers; /mcp restart NAME"))
        << arguments;
  }
  EXPECT_TRUE(access.restarted.empty());
  EXPECT_TRUE(access.asked.empty());
}

}  // namespace
}  // namespace agent
}  // namespace garuda
