// `garuda-agent tool serve` as the session starts it (CodeToolsHelper): it
// says which languages the project has, answers over its channel, and is
// locked down while it serves (no_new_privs and a seccomp filter, read from
// /proc; the control is the test process itself, which has neither). An
// index built before an edit is not used after it.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/changeset/test_tree.h"
#include "lib/knowledge/code_tools_client.h"
#include "tests/agent/fakes.h"

namespace garuda::knowledge {
namespace {

std::string StatusField(pid_t pid, const std::string& field) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, field + ":")) {
      return std::string(
          absl::StripAsciiWhitespace(line.substr(field.size() + 1)));
    }
  }
  return "";
}

class ToolServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    project_ = garuda::testing::NewTempDir("serve");
    garuda::testing::Write(project_ + "/a.py", "def helper():\n    pass\n");
    garuda::testing::Write(project_ + "/b.py",
                           "from a import helper\nhelper()\n");
    // No language server: the settings come from an empty home.
    home_ = garuda::testing::NewTempDir("home");
    ::setenv("HOME", home_.c_str(), 1);
    CodeToolsHelperOptions options;
    options.program = garuda::testing::Runfile("cmd/garuda-agent/garuda-agent");
    options.project = project_;
    absl::StatusOr<std::unique_ptr<CodeToolsHelper>> helper =
        CodeToolsHelper::Start(options);
    ASSERT_TRUE(helper.ok()) << helper.status();
    helper_ = std::move(*helper);
  }

  code_tools::Query Helper() {
    code_tools::Query query;
    query.set_operation("find_references");
    query.set_symbol("helper");
    return query;
  }

  std::string project_, home_;
  std::unique_ptr<CodeToolsHelper> helper_;
};

TEST_F(ToolServeTest, LockedDownWhileItServes) {
  EXPECT_EQ(helper_->languages(), std::vector<std::string>{"python"});
  EXPECT_TRUE(absl::StrContains(helper_->lockdown(), "no programs start"))
      << helper_->lockdown();
  pid_t pid = helper_->process().pid();
  EXPECT_EQ(StatusField(pid, "NoNewPrivs"), "1");
  EXPECT_EQ(StatusField(pid, "Seccomp"), "2");
  // The control: the same fields of a process that did not lock down.
  EXPECT_EQ(StatusField(getpid(), "Seccomp"), "0");
  absl::StatusOr<QueryResult> answer = helper_->Ask(Helper());
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_EQ(answer->results.size(), 2u);
  EXPECT_TRUE(answer->approximate);
  EXPECT_EQ(answer->results[1].context, "helper()");
  EXPECT_TRUE(helper_->Stop().ok());
}

TEST_F(ToolServeTest, AnEditIsSeenByTheNextQuestion) {
  absl::StatusOr<QueryResult> before = helper_->Ask(Helper());
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->results.size(), 2u);
  garuda::testing::Write(project_ + "/b.py",
                         "from a import helper\nhelper()\nhelper()\n");
  absl::StatusOr<QueryResult> after = helper_->Ask(Helper());
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->results.size(), 3u);
}

TEST_F(ToolServeTest, AMalformedQueryIsAnErrorAndTheChannelGoesOn) {
  code_tools::Query query;
  query.set_operation("find_references");  // neither symbol nor position
  absl::StatusOr<QueryResult> answer = helper_->Ask(query);
  EXPECT_TRUE(absl::IsInvalidArgument(answer.status())) << answer.status();
  query.set_operation("rm -rf");
  query.set_symbol("helper");
  EXPECT_TRUE(absl::IsInvalidArgument(helper_->Ask(query).status()));
  EXPECT_TRUE(helper_->Ask(Helper()).ok());
}

}  // namespace
}  // namespace garuda::knowledge
