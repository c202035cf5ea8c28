#include "lib/jobs/job_file.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace garuda {
namespace jobs {
namespace {

std::string ErrorOf(const std::string& text) {
  absl::StatusOr<Job> job = ParseJobFile(text, "/c/.garuda/jobs/nightly.json");
  return job.ok() ? "ok" : std::string(job.status().message());
}

TEST(JobFileTest, ReadsEveryField) {
  absl::StatusOr<Job> job = ParseJobFile(
      R"json({"prompt": "update the dependencies", "writeScope": ["src", "test", "target"],
          "permissions": {"allow": ["bash(make *)"], "deny": ["bash(curl *)"]},
          "testCommand": "make test", "model": {"name": "m"}, "tokenBudget": 200000})json",
      "/c/.garuda/jobs/nightly.json");
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->name, "nightly");
  EXPECT_FALSE(job->whole_worktree);
  EXPECT_EQ(job->file.write_scope_size(), 3);
  EXPECT_EQ(job->file.test_command(), "make test");
  EXPECT_EQ(job->file.permissions().allow(0), "bash(make *)");
  EXPECT_EQ(job->file.token_budget(), 200000u);
}

TEST(JobFileTest, WithoutAScopeTheWholeWorktree) {
  absl::StatusOr<Job> old = ParseJobFile(R"({"prompt": "fix lint"})", "old.json");
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(old->whole_worktree);
  // Control: an empty scope is not the whole worktree but nothing.
  absl::StatusOr<Job> empty =
      ParseJobFile(R"({"prompt": "fix lint", "writeScope": []})", "e.json");
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->whole_worktree);
}

TEST(JobFileTest, EveryBadScopeEntryIsNamed) {
  const char* const prefix = "/c/.garuda/jobs/nightly.json: writeScope[1]: ";
  struct Case {
    const char* entry;
    const char* why;
  } cases[] = {
      {"", "\"\" is empty"},
      {".", "\".\" is the whole worktree"},
      {"..", "\"..\" is outside the worktree"},
      {"/etc", "\"/etc\" is an absolute path: entries are relative to the worktree"},
      {"src/../..", "\"src/../..\" has a \"..\" component: name the folder itself"},
      {"./src", "\"./src\" has a \".\" component: name the folder itself"},
      {".git", "\".git\" is git's own folder or inside it: a job never writes git's data directly"},
      {".git/hooks", "\".git/hooks\" is git's own folder or inside it: a job never writes git's data directly"},
      {"vendor/x/.git", "\"vendor/x/.git\" is git's own folder or inside it: a job never writes git's data directly"},
      {"src/", "\"src/\" ends with \"/\": write the folder's name alone"},
      {"src//gen", "\"src//gen\" has an empty component (\"//\")"},
  };
  for (const Case& c : cases) {
    std::string text = std::string(R"({"prompt": "p", "writeScope": ["src", ")") +
                       c.entry + R"("]})";
    EXPECT_EQ(ErrorOf(text), std::string(prefix) + c.why) << c.entry;
  }
}

TEST(JobFileTest, SchemaMistakesNameTheFileAndField) {
  EXPECT_EQ(ErrorOf(R"({"prompt": "p", "writeScop": ["src"]})"),
            "/c/.garuda/jobs/nightly.json: unknown field \"writeScop\"");
  EXPECT_EQ(ErrorOf(R"({"prompt": "p", "writeScope": "src"})"),
            "/c/.garuda/jobs/nightly.json: field \"writeScope\" must be a list, not a string");
  EXPECT_EQ(ErrorOf(R"({"writeScope": ["src"]})"),
            "/c/.garuda/jobs/nightly.json: \"prompt\" is required: what the job asks the model to do");
}

// The name goes into a branch, a folder and a unit name.
TEST(JobFileTest, JobNamesAreRefusedWhereGitOrAPathWouldMisreadThem) {
  for (const char* good : {"nightly", "deps.update", "lint_fix-2"}) {
    EXPECT_TRUE(CheckJobName(good).ok()) << good;
  }
  for (const char* bad : {"", ".hidden", "-flag", "a b", "a/b", "a..b~",
                          "x:y", "name\n", "a..b", "x.lock", "x."}) {
    EXPECT_FALSE(CheckJobName(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace jobs
}  // namespace garuda
