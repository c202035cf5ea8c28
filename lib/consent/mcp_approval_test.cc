#include "lib/consent/mcp_approval.h"

#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"

namespace garuda {
namespace {

class McpApprovalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "apprXXXXXX");
    root_ = ::mkdtemp(templ.data());
    home_ = JoinPath(root_, "home");
    project_ = JoinPath(root_, "project");
    ASSERT_TRUE(MakeDirectories(project_, 0755).ok());
    sources_.user_settings_path = JoinPath(home_, ".garuda/settings.json");
    sources_.project_settings_path =
        JoinPath(project_, ".garuda/settings.json");
    ASSERT_TRUE(
        ParseJsonMessage(R"({"mcpServers": {"mine": {"command": "mine"}}})",
                         "u", &sources_.user_settings)
            .ok());
    WriteMcpJson(R"({"mcpServers": {"theirs": {"command": "theirs"}}})");
  }
  void WriteMcpJson(const std::string& text) {
    ASSERT_TRUE(
        WriteFileAtomically(JoinPath(project_, ".mcp.json"), text, 0644).ok());
  }
  // The plan with a person who answers `answer`, or nobody (asked stays 0).
  McpServerPlan Plan(std::optional<bool> answer) {
    McpPlanOptions options;
    options.project = project_;
    options.home = home_;
    if (answer) {
      options.approve = [this, answer](const McpServer& server, bool changed) {
        asked_.push_back(server.name());
        changed_ = changed;
        return *answer;
      };
    }
    absl::StatusOr<McpServerPlan> plan = PlanMcpServers(sources_, options);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? *plan : McpServerPlan();
  }
  static std::vector<std::string> Names(const std::vector<McpServer>& list) {
    std::vector<std::string> names;
    for (const McpServer& s : list) names.push_back(s.name());
    return names;
  }

  std::string root_, home_, project_;
  SettingsSources sources_;
  std::vector<std::string> asked_;
  bool changed_ = false;
};

using Strings = std::vector<std::string>;

TEST_F(McpApprovalTest, NobodyToAskSkipsAnUnapprovedProjectServer) {
  McpServerPlan plan = Plan(std::nullopt);
  EXPECT_EQ(Names(plan.start), Strings{"mine"});
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_EQ(plan.skipped[0].server.name(), "theirs");
  EXPECT_NE(plan.skipped[0].why.find("nobody to ask"), std::string::npos);
}

TEST_F(McpApprovalTest, OneApprovalPerProjectAndDefinition) {
  McpServerPlan plan = Plan(true);
  EXPECT_EQ(asked_, Strings{"theirs"});  // the person's own is never asked
  EXPECT_FALSE(changed_);
  EXPECT_EQ(Names(plan.start), (Strings{"mine", "theirs"}));
  struct stat st;
  ASSERT_EQ(::stat(McpApprovalsFile(home_, project_).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // Recorded: the next session, even without a person, starts it unasked.
  asked_.clear();
  plan = Plan(std::nullopt);
  EXPECT_EQ(Names(plan.start), (Strings{"mine", "theirs"}));

  // A changed definition asks again, and says it changed.
  WriteMcpJson(
      R"({"mcpServers": {"theirs": {"command": "theirs", "args": ["--x"]}}})");
  plan = Plan(std::nullopt);
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_NE(plan.skipped[0].why.find("changed"), std::string::npos);
  plan = Plan(false);
  EXPECT_EQ(asked_, Strings{"theirs"});
  EXPECT_TRUE(changed_);
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_EQ(plan.skipped[0].why, "you did not approve it for this project");
}

TEST_F(McpApprovalTest, AnApprovalIsForThatProjectOnly) {
  Plan(true);
  std::string other = JoinPath(root_, "other");
  ASSERT_TRUE(MakeDirectories(other, 0755).ok());
  ASSERT_TRUE(WriteFileAtomically(
                  JoinPath(other, ".mcp.json"),
                  R"({"mcpServers": {"theirs": {"command": "theirs"}}})", 0644)
                  .ok());
  McpPlanOptions options;
  options.project = other;
  options.home = home_;
  absl::StatusOr<McpServerPlan> plan = PlanMcpServers(sources_, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(Names(plan->start), Strings{"mine"});
  EXPECT_EQ(plan->skipped.size(), 1u);
}

TEST_F(McpApprovalTest, APolicyForbidsProjectServersEvenApprovedOnes) {
  Plan(true);
  ASSERT_TRUE(ParseJsonMessage(R"({"mcp": {"projectServers": false}})", "p",
                               &sources_.user_policy)
                  .ok());
  sources_.user_policy_path = JoinPath(home_, ".garuda/policy.json");
  asked_.clear();
  McpServerPlan plan = Plan(true);
  EXPECT_TRUE(asked_.empty());
  EXPECT_EQ(Names(plan.start), Strings{"mine"});
  ASSERT_EQ(plan.skipped.size(), 1u);
  EXPECT_NE(plan.skipped[0].why.find(sources_.user_policy_path),
            std::string::npos);
}

}  // namespace
}  // namespace garuda
