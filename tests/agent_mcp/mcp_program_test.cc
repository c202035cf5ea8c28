// The real garuda-agent with the real helpers and @modelcontextprotocol/
// server-everything configured in the person's settings: `mcp list`,
// `mcp check NAME`, and a one-shot session whose model calls the server's
// tool, the server started by garuda-stager in the session's sandbox.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/changeset/test_tree.h"
#include "tests/agent/fakes.h"
#include "tests/providers/scripted_server.h"

namespace garuda {
namespace agent {
namespace {

using garuda::testing::Runfile;
using provider::ProviderScript;
using provider::testing::ScriptedServer;
using provider::testing::ServerKind;

struct Ran {
  int code = -1;
  std::string out, err;
};

class McpProgramTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string base = garuda::testing::NewTempDir("mcp-program");
    home_ = base + "/home";
    project_ = base + "/project";
    helpers_ = base + "/helpers";
    for (const std::string& dir :
         {home_, home_ + "/.garuda", project_, helpers_, base + "/managed"}) {
      garuda::testing::MakeDir(dir);
    }
    managed_ = base + "/managed";
    for (const char* helper : {"garuda-auditor", "garuda-budgeter",
                               "garuda-stager", "garuda-applier"}) {
      garuda::testing::Symlink(
          Runfile(absl::StrCat("cmd/", helper, "/", helper)),
          JoinPath(helpers_, helper));
    }
    // The sandbox shows the project, not the test's runfiles: the server's
    // files are copied in, as a project that vendors its tools has them.
    const std::string modules = Runfile("tests/mcp/node_modules");
    Ran copied = Exec({"/bin/cp", "-rL", modules, project_ + "/node_modules"});
    ASSERT_EQ(copied.code, 0) << copied.err;
    script_ = project_ +
              "/node_modules/@modelcontextprotocol/server-everything/dist/"
              "index.js";
  }

  void Settings(const std::string& permissions) {
    garuda::testing::Write(
        home_ + "/.garuda/settings.json",
        absl::StrCat(R"({"permissions": {"allow": [)", permissions,
                     R"(]}, "mcpServers": {"everything": {"command": "node", )",
                     R"("args": [")", script_, R"(", "stdio"]}}})"));
  }

  Ran Exec(const std::vector<std::string>& argv) {
    std::vector<std::string> env = {"HOME=" + home_, "PATH=/usr/bin:/bin",
                                    "GARUDA_MANAGED_POLICY_DIR=" + managed_,
                                    "OPENAI_API_KEY=sk-test"};
    int out[2], err[2];
    EXPECT_EQ(::pipe2(out, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(err, O_CLOEXEC), 0);
    std::vector<char*> args, envp;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const std::string& e : env)
      envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
      int null = ::open("/dev/null", O_RDONLY);
      ::dup2(null, 0);
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      ::execve(args[0], args.data(), envp.data());
      ::_exit(127);
    }
    ::close(out[1]);
    ::close(err[1]);
    Ran run;
    // What these runs write to stderr stays far below a pipe's buffer.
    run.out = ReadAll(out[0]).value_or("");
    run.err = ReadAll(err[0]).value_or("");
    ::close(out[0]);
    ::close(err[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    run.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return run;
  }

  Ran Agent(std::vector<std::string> extra) {
    std::vector<std::string> argv = {Runfile("cmd/garuda-agent/garuda-agent"),
                                     "--project", project_, "--helpers-dir",
                                     helpers_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return Exec(argv);
  }

  std::string home_, project_, helpers_, managed_, script_;
};

TEST_F(McpProgramTest, ListAndCheck) {
  Settings("");
  garuda::testing::Write(project_ + "/.mcp.json",
                         R"({"mcpServers": {"theirs": {"command": "x"}}})");
  Ran list = Agent({"mcp", "list"});
  EXPECT_EQ(list.code, 0) << list.err;
  EXPECT_TRUE(absl::StrContains(list.out, "everything: starts")) << list.out;
  // A project's server, never approved, nobody to ask: skipped, and why.
  EXPECT_TRUE(absl::StrContains(list.out, "theirs: skipped: ")) << list.out;

  Ran check = Agent({"mcp", "check", "everything"});
  EXPECT_EQ(check.code, 0) << check.out << check.err;
  EXPECT_TRUE(absl::StrContains(check.out, "everything: ready")) << check.out;
  EXPECT_TRUE(absl::StrContains(check.out, "OS sandbox")) << check.out;
  EXPECT_TRUE(absl::StrContains(check.out, "echo")) << check.out;
  EXPECT_TRUE(absl::StrContains(check.out, "mcp__everything")) << check.out;

  Ran unknown = Agent({"mcp", "check", "nobody"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_TRUE(absl::StrContains(unknown.err, "no MCP server named \"nobody\""))
      << unknown.err;
  EXPECT_TRUE(absl::StrContains(unknown.err, "everything")) << unknown.err;

  Ran skipped = Agent({"mcp", "check", "theirs"});
  EXPECT_EQ(skipped.code, 1);
  EXPECT_TRUE(absl::StrContains(skipped.err, "not yet approved"))
      << skipped.err;

  Ran wrong = Agent({"mcp", "frob"});
  EXPECT_EQ(wrong.code, 2);
  EXPECT_TRUE(absl::StrContains(wrong.err, "mcp list")) << wrong.err;
}

TEST_F(McpProgramTest, CheckSaysWhyAServerDidNotStart) {
  garuda::testing::Write(
      home_ + "/.garuda/settings.json",
      R"({"mcpServers": {"gone": {"command": "no-such-mcp-server"}}})");
  Ran check = Agent({"mcp", "check", "gone"});
  EXPECT_EQ(check.code, 1) << check.out << check.err;
  EXPECT_TRUE(absl::StrContains(check.out, "gone: failed")) << check.out;
  EXPECT_TRUE(absl::StrContains(check.out, "last error")) << check.out;
}

TEST_F(McpProgramTest, OneShotCallThroughTheStagersSandbox) {
  Settings(R"("mcp__everything__echo")");
  ProviderScript script;
  *script.add_replies() = garuda::testing::ToolCallReply(
      "c1", "mcp__everything__echo", R"({"message":"from the sandbox"})");
  *script.add_replies() = garuda::testing::TextReply("Done.");
  auto server = ScriptedServer::Start(ServerKind::kOpenAi, std::move(script));
  ASSERT_TRUE(server.ok()) << server.status();
  Ran run = Agent({"--provider", "openai", "--model", "m", "--base-url",
                   (*server)->base_url(), "-p", "echo", "--output-format",
                   "stream-json"});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "MCP server everything: ")) << run.err;
  EXPECT_TRUE(
      absl::StrContains(run.out, R"("output":"Echo: from the sandbox")"))
      << run.out;
  // The stream's tool_result and the final report name the server.
  EXPECT_TRUE(absl::StrContains(
      run.out, R"("mcp":{"server":"everything","tool":"echo")"))
      << run.out;
  EXPECT_TRUE(absl::StrContains(run.out, R"("outcome":"ok")")) << run.out;
}

}  // namespace
}  // namespace agent
}  // namespace garuda
