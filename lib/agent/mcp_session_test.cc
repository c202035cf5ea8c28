// The terminal's question for a server a project defines: what it would
// run, answered on the terminal, remembered per project; no question
// without a terminal.
#include "lib/agent/mcp_session.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"

namespace garuda {
namespace agent {
namespace {

class McpSessionPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "planXXXXXX");
    root_ = ::mkdtemp(templ.data());
    home_ = JoinPath(root_, "home");
    project_ = JoinPath(root_, "project");
    ASSERT_TRUE(MakeDirectories(home_, 0700).ok());
    ASSERT_TRUE(MakeDirectories(project_, 0755).ok());
    ::setenv("HOME", home_.c_str(), 1);
    WriteMcpJson("--stdio");
  }

  void WriteMcpJson(const std::string& argument) {
    ASSERT_TRUE(WriteFileAtomically(
                    JoinPath(project_, ".mcp.json"),
                    R"({"mcpServers": {"theirs": {"command": "theirs-server",
                        "args": [")" +
                        argument + R"("]}}})",
                    0644)
                    .ok());
  }

  // The plan of a session whose person types `typed`; what the terminal
  // showed goes to `shown`.
  McpServerPlan Plan(bool terminal, const std::string& typed,
                     std::string* shown) {
    int in[2], err[2];
    EXPECT_EQ(::pipe(in), 0);
    EXPECT_EQ(::pipe(err), 0);
    EXPECT_EQ(::write(in[1], typed.data(), typed.size()),
              static_cast<ssize_t>(typed.size()));
    ::close(in[1]);
    AgentOptions options;
    options.in_fd = in[0];
    options.err_fd = err[1];
    absl::StatusOr<McpServerPlan> plan =
        PlanSessionMcp(options, project_, terminal);
    ::close(err[1]);
    ::close(in[0]);
    shown->clear();
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(err[0], buffer, sizeof buffer)) > 0) {
      shown->append(buffer, static_cast<size_t>(n));
    }
    ::close(err[0]);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? *plan : McpServerPlan();
  }

  std::string root_, home_, project_;
};

TEST_F(McpSessionPlanTest, YesOnTheTerminalStartsItAndIsRemembered) {
  std::string shown;
  McpServerPlan plan = Plan(true, "y\n", &shown);
  ASSERT_EQ(plan.start.size(), 1u) << shown;
  EXPECT_EQ(plan.start[0].name(), "theirs");
  EXPECT_TRUE(absl::StrContains(shown, "\"theirs\"")) << shown;
  EXPECT_TRUE(absl::StrContains(shown, "theirs-server --stdio")) << shown;
  EXPECT_TRUE(absl::StrContains(shown, ".mcp.json")) << shown;
  EXPECT_TRUE(absl::StrContains(shown, "[y/N]")) << shown;

  // Approved once for this project: not asked again.
  plan = Plan(true, "", &shown);
  ASSERT_EQ(plan.start.size(), 1u);
  EXPECT_EQ(shown, "");
}

TEST_F(McpSessionPlanTest, AChangedDefinitionIsAskedAgainAndNoSkipsIt) {
  std::string shown;
  ASSERT_EQ(Plan(true, "yes\n", &shown).start.size(), 1u);
  WriteMcpJson("--read-everything");
  McpServerPlan plan = Plan(true, "n\n", &shown);
  EXPECT_TRUE(plan.start.empty());
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_TRUE(absl::StrContains(shown, "changed since you approved")) << shown;
  EXPECT_TRUE(absl::StrContains(shown, "theirs-server --read-everything"))
      << shown;
}

// Without a terminal nobody is asked and the server does not start; the
// same plan on a terminal asks (the control).
TEST_F(McpSessionPlanTest, WithoutATerminalItIsSkippedUnasked) {
  std::string shown;
  McpServerPlan plan = Plan(false, "y\n", &shown);
  EXPECT_TRUE(plan.start.empty());
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_EQ(shown, "");

  plan = Plan(true, "\n", &shown);
  EXPECT_TRUE(plan.start.empty());
  EXPECT_TRUE(absl::StrContains(shown, "[y/N]")) << shown;
}

}  // namespace
}  // namespace agent
}  // namespace garuda
