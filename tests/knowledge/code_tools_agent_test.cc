// The model's code tools end to end: the real garuda-agent (one-shot, JSON
// report) with its real helpers and `garuda-agent tool serve`, against a
// scripted provider on loopback. What is checked is what the model and the
// person get: the tools in the model's list (only for a Java or Python
// project), the approximate warning as the first line of the tool result
// (also when the answer is empty, unresolved or cut), the ≈ on the person's
// line, provenance and context per hit, the cap, and a language server's
// precise answer or its failure.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
#include "lib/changeset/test_tree.h"
#include "lib/provider/json.h"
#include "proto/agent_report.pb.h"
#include "tests/agent/fakes.h"
#include "tests/providers/scripted_server.h"

extern char** environ;

namespace garuda {
namespace {

using garuda::testing::Runfile;
using provider::ProviderScript;
using provider::testing::ScriptedServer;
using provider::testing::ServerKind;

constexpr char kWarningStart[] = "WARNING: approximate result.";

struct Outcome {
  int code = -1;
  std::string err;
  agent::OneShotReport report;
  // What the model received as the tool's result, and the tools it was
  // offered in the first request.
  std::string tool_result;
  std::string first_request;
};

class CodeToolsAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = garuda::testing::NewTempDir("code_tools");
    home_ = base_ + "/home";
    project_ = base_ + "/project";
    helpers_ = base_ + "/helpers";
    for (const std::string& dir :
         {home_, home_ + "/.garuda", project_, project_ + "/shop", helpers_,
          base_ + "/managed"}) {
      garuda::testing::MakeDir(dir);
    }
    for (const char* helper : {"garuda-auditor", "garuda-budgeter",
                               "garuda-stager", "garuda-applier"}) {
      garuda::testing::Symlink(
          Runfile(absl::StrCat("cmd/", helper, "/", helper)),
          JoinPath(helpers_, helper));
    }
  }

  void WriteShop() {
    garuda::testing::Write(project_ + "/shop/__init__.py", "");
    garuda::testing::Write(project_ + "/shop/cart.py",
                           "class Cart:\n"
                           "    def add(self, item):\n"
                           "        return item\n");
    garuda::testing::Write(project_ + "/app.py",
                           "from shop.cart import Cart\n"
                           "\n"
                           "\n"
                           "def checkout(cart: Cart):\n"
                           "    cart.add(1)  # the first\n"
                           "    return cart.add(2)\n");
  }

  // One tool call of the model, then its last answer.
  Outcome Ask(const std::string& tool, const std::string& arguments) {
    ProviderScript script;
    *script.add_replies() =
        garuda::testing::ToolCallReply("c1", tool, arguments);
    *script.add_replies() = garuda::testing::TextReply("Done.");
    auto server = ScriptedServer::Start(ServerKind::kOpenAi, script);
    EXPECT_TRUE(server.ok()) << server.status();
    Outcome outcome;
    if (!server.ok()) return outcome;
    std::vector<std::string> argv = {Runfile("cmd/garuda-agent/garuda-agent"),
                                     "--project",
                                     project_,
                                     "--helpers-dir",
                                     helpers_,
                                     "--provider",
                                     "openai",
                                     "--model",
                                     "m",
                                     "--base-url",
                                     (*server)->base_url(),
                                     "-p",
                                     "look it up",
                                     "--output-format",
                                     "json"};
    std::vector<std::string> env = {
        "HOME=" + home_, "PATH=/usr/bin:/bin:/usr/local/bin",
        "GARUDA_MANAGED_POLICY_DIR=" + base_ + "/managed",
        "OPENAI_API_KEY=sk-test"};
    std::string out_path = base_ + "/out", err_path = base_ + "/err";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<char*> args, envp;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    EXPECT_EQ(
        posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data()),
        0);
    posix_spawn_file_actions_destroy(&actions);
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    outcome.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    outcome.err = ReadFileToString(err_path).value_or("");
    std::string out = ReadFileToString(out_path).value_or("");
    EXPECT_TRUE(ParseJsonMessage(out, "stdout", &outcome.report).ok())
        << out << outcome.err;
    std::vector<provider::RecordedRequest> requests = (*server)->requests();
    if (!requests.empty()) outcome.first_request = requests[0].body();
    if (requests.size() >= 2) {
      // The second request carries the tool's result: the tool message.
      absl::StatusOr<google::protobuf::Value> body =
          provider::ParseJson(requests[1].body(), "the request");
      EXPECT_TRUE(body.ok());
      if (body.ok()) {
        const auto* messages = provider::ListMember(*body, "messages");
        if (messages != nullptr) {
          for (const google::protobuf::Value& message : messages->values()) {
            if (provider::StringMember(message, "role") == "tool") {
              outcome.tool_result = provider::StringMember(message, "content");
            }
          }
        }
      }
    }
    return outcome;
  }

  std::string Screen(const Outcome& outcome) {
    if (outcome.report.tool_calls_size() != 1) return "";
    return outcome.report.tool_calls(0).outcome();
  }

  void ConfigureLsp(const std::string& command) {
    garuda::testing::Write(
        home_ + "/.garuda/settings.json",
        absl::StrCat(R"({"knowledge":{"lsp":{"python":")", command,
                     R"("},"lspTimeoutMs":60000}})"));
  }

  std::string base_, home_, project_, helpers_;
};

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST_F(CodeToolsAgentTest, FindReferencesReachesTheModelWithTheWarningFirst) {
  WriteShop();
  Outcome outcome =
      Ask("find_references", R"({"path":"shop/cart.py","line":2,"column":9})");
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_TRUE(absl::StrContains(outcome.first_request, "\"find_references\""));
  EXPECT_TRUE(absl::StrContains(outcome.first_request, "\"callers\""));
  EXPECT_TRUE(absl::StrContains(outcome.first_request, "\"impact\""));
  std::vector<std::string> lines = Lines(outcome.tool_result);
  ASSERT_GE(lines.size(), 4u) << outcome.tool_result;
  EXPECT_TRUE(absl::StartsWith(lines[0], kWarningStart)) << lines[0];
  EXPECT_TRUE(absl::StrContains(lines[1], "method shop/cart.py:Cart.add"))
      << outcome.tool_result;
  // path:line:column, provenance, and the line itself.
  EXPECT_TRUE(absl::StrContains(outcome.tool_result,
                                "app.py:5:10 [syntactic]: cart.add(1)  # the "
                                "first"))
      << outcome.tool_result;
  EXPECT_TRUE(absl::StrContains(outcome.tool_result,
                                "app.py:6:17 [syntactic]: return cart.add(2)"))
      << outcome.tool_result;
  EXPECT_TRUE(absl::StartsWith(Screen(outcome), "≈ find_references"))
      << Screen(outcome);
}

// The negative control of the tool list: a project without Java or Python
// files is not offered the code tools.
TEST_F(CodeToolsAgentTest, NoCodeToolsWithoutJavaOrPython) {
  garuda::testing::Write(project_ + "/notes.txt", "nothing to index\n");
  Outcome outcome = Ask("read_file", R"({"path":"notes.txt"})");
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_TRUE(absl::StrContains(outcome.first_request, "\"read_file\""));
  EXPECT_FALSE(absl::StrContains(outcome.first_request, "find_references"));
}

TEST_F(CodeToolsAgentTest, BySymbolCallersAndImpact) {
  WriteShop();
  Outcome callers = Ask("callers", R"({"symbol":"Cart.add"})");
  ASSERT_EQ(callers.code, 0) << callers.err;
  EXPECT_TRUE(absl::StartsWith(callers.tool_result, kWarningStart));
  EXPECT_TRUE(absl::StrContains(callers.tool_result, "in app.py:checkout"))
      << callers.tool_result;
  EXPECT_TRUE(absl::StartsWith(Screen(callers), "≈ callers"));

  Outcome impact = Ask("impact", R"({"symbol":"shop.cart.Cart.add"})");
  ASSERT_EQ(impact.code, 0) << impact.err;
  EXPECT_TRUE(absl::StartsWith(impact.tool_result, kWarningStart));
  EXPECT_TRUE(absl::StrContains(impact.tool_result, "risk low (heuristic"))
      << impact.tool_result;
  EXPECT_TRUE(absl::StartsWith(Screen(impact), "≈ impact"));
}

TEST_F(CodeToolsAgentTest, EmptyAndUnresolvedAnswersAreApproximateToo) {
  WriteShop();
  Outcome unknown = Ask("find_references", R"({"symbol":"NoSuchThing"})");
  ASSERT_EQ(unknown.code, 0) << unknown.err;
  EXPECT_TRUE(absl::StartsWith(unknown.tool_result, kWarningStart))
      << unknown.tool_result;
  EXPECT_TRUE(absl::StrContains(unknown.tool_result, "0 results"));
  EXPECT_TRUE(absl::StrContains(unknown.tool_result, "NoSuchThing"));
  EXPECT_TRUE(absl::StartsWith(Screen(unknown), "≈ ")) << Screen(unknown);

  // A position on no identifier.
  Outcome nothing =
      Ask("callers", R"({"path":"shop/cart.py","line":3,"column":1})");
  ASSERT_EQ(nothing.code, 0) << nothing.err;
  EXPECT_TRUE(absl::StartsWith(nothing.tool_result, kWarningStart));
  EXPECT_TRUE(absl::StrContains(nothing.tool_result, "no identifier at"));
  EXPECT_TRUE(absl::StartsWith(Screen(nothing), "≈ "));

  // Both forms at once: an error for the model to fix, no answer.
  Outcome both =
      Ask("find_references",
          R"({"symbol":"Cart","path":"app.py","line":1,"column":1})");
  ASSERT_EQ(both.code, 0) << both.err;
  EXPECT_TRUE(absl::StartsWith(both.tool_result, "Error: "));
  EXPECT_TRUE(absl::StrContains(both.tool_result,
                                "find_references: give either \"symbol\""))
      << both.tool_result;
  EXPECT_FALSE(absl::StrContains(both.tool_result, kWarningStart));
}

TEST_F(CodeToolsAgentTest, ACutAnswerKeepsTheWarningAndSaysSo) {
  WriteShop();
  std::string many = "from shop.cart import Cart\n\n\ndef spam(cart: Cart):\n";
  for (int i = 0; i < 250; ++i)
    absl::StrAppend(&many, "    cart.add(", i, ")\n");
  garuda::testing::Write(project_ + "/many.py", many);
  Outcome outcome = Ask("find_references", R"({"symbol":"Cart.add"})");
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  std::vector<std::string> lines = Lines(outcome.tool_result);
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(absl::StartsWith(lines[0], kWarningStart));
  EXPECT_TRUE(absl::StrContains(lines[1], "200+ (truncated) results"))
      << lines[1];
  int hits = 0;
  for (const std::string& line : lines) {
    if (absl::StrContains(line, " [syntactic]")) ++hits;
  }
  EXPECT_EQ(hits, 200);
  EXPECT_TRUE(absl::StrContains(outcome.tool_result, "(truncated: more"));
  EXPECT_TRUE(absl::StrContains(Screen(outcome), "≈ find_references"));
  EXPECT_TRUE(absl::StrContains(Screen(outcome), "(truncated)"));
}

TEST_F(CodeToolsAgentTest, ADeniedFileIsLeftOutAndSaid) {
  WriteShop();
  garuda::testing::Write(home_ + "/.garuda/settings.json",
                         R"j({"permissions":{"deny":["read_file(app.py)"]}})j");
  Outcome outcome = Ask("find_references", R"({"symbol":"Cart.add"})");
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_TRUE(absl::StartsWith(outcome.tool_result, kWarningStart));
  EXPECT_FALSE(absl::StrContains(outcome.tool_result, "app.py:"))
      << outcome.tool_result;
  EXPECT_TRUE(absl::StrContains(outcome.tool_result,
                                "2 result(s) in files the settings deny"))
      << outcome.tool_result;
}

bool HaveNode() {
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/bin"}) {
    if (::access(JoinPath(dir, "node").c_str(), X_OK) == 0) return true;
  }
  return false;
}

TEST_F(CodeToolsAgentTest, ALanguageServerAnswersPrecisely) {
  if (!HaveNode()) GTEST_SKIP() << "node is not installed (tools/setup.sh)";
  WriteShop();
  ConfigureLsp(absl::StrCat(
      "node ",
      Runfile("tools/knowledge/node_modules/pyright/langserver.index.js"),
      " --stdio"));
  Outcome outcome =
      Ask("find_references", R"({"path":"shop/cart.py","line":2,"column":9})");
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_FALSE(absl::StartsWith(outcome.tool_result, kWarningStart))
      << outcome.tool_result;
  EXPECT_TRUE(absl::StrContains(outcome.tool_result, "app.py:5:10 [precise]"))
      << outcome.tool_result;
  EXPECT_TRUE(
      absl::StrContains(outcome.tool_result, "from the language server"));
  EXPECT_TRUE(absl::StartsWith(Screen(outcome), "find_references"))
      << Screen(outcome);
}

// The control of the one above: the same question with a server that
// cannot start gets the index's answer, the reason, and the warning.
TEST_F(CodeToolsAgentTest, AFailedLanguageServerGivesTheSyntacticAnswer) {
  WriteShop();
  ConfigureLsp("/nonexistent/language-server --stdio");
  Outcome outcome =
      Ask("find_references", R"({"path":"shop/cart.py","line":2,"column":9})");
  ASSERT_EQ(outcome.code, 0) << outcome.err;
  EXPECT_TRUE(absl::StartsWith(outcome.tool_result, kWarningStart));
  EXPECT_TRUE(
      absl::StrContains(outcome.tool_result, "the language server failed"))
      << outcome.tool_result;
  EXPECT_TRUE(
      absl::StrContains(outcome.tool_result, "app.py:5:10 [syntactic]"));
  EXPECT_TRUE(absl::StartsWith(Screen(outcome), "≈ find_references"));
}

}  // namespace
}  // namespace garuda
