#include "lib/tools/run.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/changeset/test_tree.h"
#include "lib/tools/result.h"

namespace garuda {
namespace {

using garuda::testing::NewTempDir;
using garuda::testing::Symlink;
using garuda::testing::Write;

std::unique_ptr<Project> MakeProject(const std::string& root) {
  absl::StatusOr<std::unique_ptr<Project>> project = Project::Open(root);
  EXPECT_TRUE(project.ok()) << project.status();
  return std::move(*project);
}

TEST(PermissionRequestForTest, ArgumentsAreNormalized) {
  std::string root = NewTempDir("request") + "/p";
  Write(root + "/src/a.c", "x\n");
  Symlink("src/a.c", root + "/alias.c");
  std::unique_ptr<Project> project = MakeProject(root);
  auto request = [&](absl::string_view tool, absl::string_view json) {
    absl::StatusOr<PermissionRequest> r =
        PermissionRequestFor(*project, tool, json, ToolProfile::kDefault);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->argument : "";
  };
  EXPECT_EQ(request("bash", R"({"command": "git status"})"), "git status");
  EXPECT_EQ(request("read_file", R"({"path": "./src/../src/a.c"})"), "src/a.c");
  // A link inside the project is matched as the file it reaches.
  EXPECT_EQ(request("read_file", R"({"path": "alias.c"})"), "src/a.c");
  EXPECT_EQ(request("list_files", "{}"), "");
  EXPECT_EQ(request("edit_file",
                    absl::StrCat(
                        R"({"path": ")", root,
                        R"(/src/a.c", "old_string": "x", "new_string": "y"})")),
            "src/a.c");
  EXPECT_FALSE(PermissionRequestFor(*project, "write_file",
                                    R"({"path": "../x", "content": ""})",
                                    ToolProfile::kDefault)
                   .ok());
  EXPECT_FALSE(
      PermissionRequestFor(*project, "bash",
                           R"({"command": "ls", "outside_sandbox": true})",
                           ToolProfile::kStrict)
          .ok());
}

TEST(RunReadOnlyToolTest, ResultsAreCappedWithANote) {
  std::string root = NewTempDir("run") + "/p";
  std::string big;
  for (int i = 0; i < 30000; ++i) big += "a line of text\n";
  Write(root + "/big.txt", big);
  std::unique_ptr<Project> project = MakeProject(root);
  ToolOutput output = RunReadOnlyTool(*project, "read_file",
                                      R"({"path": "big.txt", "limit": 30000})");
  EXPECT_FALSE(output.is_error);
  EXPECT_LT(output.content.size(), kToolResultLimit + 300);
  size_t last = output.content.rfind('\n');
  EXPECT_NE(output.content.substr(last).find("result cut"), std::string::npos);
  // Control: a small read is not cut.
  ToolOutput small = RunReadOnlyTool(*project, "read_file",
                                     R"({"path": "big.txt", "limit": 2})");
  EXPECT_EQ(small.content.find("result cut"), std::string::npos);
}

TEST(RunReadOnlyToolTest, ErrorsAreResultsForTheModel) {
  std::string root = NewTempDir("run-errors") + "/p";
  Write(root + "/a", "x\n");
  std::unique_ptr<Project> project = MakeProject(root);
  ToolOutput output =
      RunReadOnlyTool(*project, "read_file", R"({"file": "a"})");
  EXPECT_TRUE(output.is_error);
  EXPECT_EQ(output.content,
            "Error: read_file: unknown field \"file\" (the fields are limit, "
            "offset, path)");
  EXPECT_TRUE(RunReadOnlyTool(*project, "edit_file", "{}").is_error);
}

TEST(RunReadOnlyToolTest, DeniedFilesAreLeftOutOfSearches) {
  std::string root = NewTempDir("run-deny") + "/p";
  Write(root + "/secret/key.txt", "password=1\n");
  Write(root + "/src/a.c", "password=2\n");
  std::unique_ptr<Project> project = MakeProject(root);
  PermissionSettings settings;
  settings.add_deny("grep(secret/**)");
  settings.add_deny("list_files(secret/**)");
  Permissions permissions;
  ASSERT_TRUE(permissions.AddRules(settings, "settings.json").ok());
  // Negative control: without the rules the secret shows.
  EXPECT_EQ(
      RunReadOnlyTool(*project, "grep", R"({"pattern": "password"})").content,
      "secret/key.txt:1: password=1\nsrc/a.c:1: password=2\n");
  EXPECT_EQ(RunReadOnlyTool(*project, "grep", R"({"pattern": "password"})",
                            &permissions)
                .content,
            "src/a.c:1: password=2\n");
  EXPECT_EQ(RunReadOnlyTool(*project, "list_files", "{}", &permissions).content,
            "src/a.c\n");
  EXPECT_TRUE(
      RunReadOnlyTool(*project, "grep",
                      R"({"pattern": "password", "path": "secret/key.txt"})",
                      &permissions)
          .is_error);
}

}  // namespace
}  // namespace garuda
