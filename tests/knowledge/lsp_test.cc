// find_references through a language server (pyright, pinned in
// tools/knowledge/package.json, installed by tools/setup.sh), and the
// fallback to the syntactic index when the server fails or is slow.
#include <sys/stat.h>

#include <cstdlib>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/knowledge/tool_command.h"

namespace garuda::knowledge {
namespace {

std::string Tmp(const std::string& name) {
  return JoinPath(std::getenv("TEST_TMPDIR"), name);
}

bool NodeInstalled() {
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path ? path : "", ':')) {
    if (access(JoinPath(dir, "node").c_str(), X_OK) == 0) return true;
  }
  return false;
}

std::string PyrightServer() {
  return JoinPath(std::getenv("TEST_SRCDIR"),
                  "garuda/tools/knowledge/node_modules/pyright/"
                  "langserver.index.js");
}

class LspTest : public testing::Test {
 protected:
  void SetUp() override {
    project_ = Tmp("project");
    ASSERT_TRUE(MakeDirectories(JoinPath(project_, "pkg"), 0755).ok());
    Write("pkg/__init__.py", "");
    Write("pkg/a.py", "def helper(x):\n    return x\n");
    Write("pkg/b.py",
          "from pkg.a import helper\n"
          "\n"
          "\n"
          "def run():\n"
          "    return helper(1) + helper(2)\n"
          "\n"
          "\n"
          "def other(helper):\n"
          "    # helper in a comment, and a parameter that shadows it\n"
          "    return helper\n");
    home_ = Tmp("home");
    ASSERT_TRUE(MakeDirectories(JoinPath(home_, ".garuda"), 0700).ok());
  }

  void Write(const std::string& path, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomically(JoinPath(project_, path), text, 0644).ok());
  }

  void Configure(const std::string& command, int timeout_ms) {
    ASSERT_TRUE(WriteFileAtomically(
                    JoinPath(home_, ".garuda/settings.json"),
                    absl::StrCat(R"({"knowledge":{"lsp":{"python":")", command,
                                 R"("},"lspTimeoutMs":)", timeout_ms, "}}"),
                    0600)
                    .ok());
  }

  std::string Ask(bool use_lsp) {
    ToolCommandOptions options;
    options.operation = "find_references";
    options.project = project_;
    options.path = "pkg/a.py";
    options.line = 1;
    options.column = 5;
    options.json = true;
    options.use_lsp = use_lsp;
    options.settings.managed_dir = Tmp("etc");
    options.settings.home = home_;
    options.settings.project = project_;
    options.settings_given = true;
    std::istringstream in;
    std::ostringstream out;
    absl::Status status = RunToolCommand(options, in, out);
    EXPECT_TRUE(status.ok()) << status;
    return out.str();
  }

  std::string project_;
  std::string home_;
};

TEST_F(LspTest, PyrightAnswersPrecisely) {
  if (!NodeInstalled()) {
    GTEST_SKIP() << "node is not installed: the pyright test needs Node.js "
                    "(tools/setup.sh installs nodejs and pyright)";
  }
  struct stat info;
  ASSERT_EQ(stat(PyrightServer().c_str(), &info), 0)
      << "pyright is missing at " << PyrightServer() << ": run tools/setup.sh";
  Configure("node " + PyrightServer() + " --stdio", 120000);
  std::string json = Ask(true);
  EXPECT_NE(json.find(R"("approximate":false)"), std::string::npos) << json;
  EXPECT_NE(
      json.find(
          R"("path":"pkg/b.py","line":1,"column":19,"provenance":"precise")"),
      std::string::npos)
      << json;
  EXPECT_NE(
      json.find(
          R"("path":"pkg/b.py","line":5,"column":12,"provenance":"precise")"),
      std::string::npos)
      << json;
  EXPECT_NE(
      json.find(
          R"("path":"pkg/b.py","line":5,"column":24,"provenance":"precise")"),
      std::string::npos)
      << json;
  EXPECT_EQ(json.find("syntactic"), std::string::npos) << json;
  EXPECT_EQ(json.find(R"("line":10)"), std::string::npos)
      << "the shadowing parameter is not a reference: " << json;

  // Negative control: without the server the same question is answered by
  // the syntactic index, and says it is approximate.
  std::string experts = Ask(false);
  EXPECT_NE(experts.find(R"("approximate":true)"), std::string::npos)
      << experts;
  EXPECT_EQ(experts.find("precise"), std::string::npos) << experts;
  EXPECT_NE(experts.find(R"("line":5,"column":24,"provenance":"syntactic")"),
            std::string::npos)
      << experts;
}

TEST_F(LspTest, AFailingServerFallsBackAndSaysSo) {
  Configure("/nonexistent/garuda-no-such-server --stdio", 5000);
  std::string json = Ask(true);
  EXPECT_NE(json.find(R"("approximate":true)"), std::string::npos) << json;
  EXPECT_NE(json.find("the language server failed"), std::string::npos) << json;
  EXPECT_NE(json.find("the syntactic index answered instead"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("line":5,"column":12,"provenance":"syntactic")"),
            std::string::npos)
      << json;
}

TEST_F(LspTest, ASilentServerTimesOutAndFallsBack) {
  Configure("sleep 30", 300);
  std::string json = Ask(true);
  EXPECT_NE(json.find(R"("approximate":true)"), std::string::npos) << json;
  EXPECT_NE(json.find("did not answer within 300 ms"), std::string::npos)
      << json;
  EXPECT_NE(json.find("syntactic"), std::string::npos) << json;
}

}  // namespace
}  // namespace garuda::knowledge
