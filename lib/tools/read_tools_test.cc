#include "lib/tools/read_tools.h"

#include <sys/stat.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/changeset/test_tree.h"
#include "lib/tools/test_project.h"

namespace garuda {
namespace {

using garuda::testing::NewTempDir;
using garuda::testing::Symlink;
using garuda::testing::Write;

using Fixture = garuda::testing::TestProject;

// A project folder with a secret beside it.
Fixture MakeFixture(const std::string& label, bool git = false) {
  return garuda::testing::MakeTestProject(
      label, [git](const std::string& parent, const std::string& root) {
        Write(parent + "/secret.txt", "TOP SECRET\n");
        Write(root + "/a.txt", "one\ntwo\nthree\n");
        Write(root + "/src/x.c", "int x;\nint main() { return x; }\n");
        Write(root + "/src/deep/y.c", "int y;\n");
        Write(root + "/build/out.o", "compiled main\n");
        Write(root + "/.git-not/keep", "x\n");
        if (git) {
          Write(root + "/.gitignore", "build/\n");
          EXPECT_EQ(
              std::system(absl::StrCat("git init -q '", root, "'").c_str()), 0);
        }
      });
}

TEST(ReadFileToolTest, NumberedLinesWithOffsetAndLimit) {
  Fixture f = MakeFixture("read");
  absl::StatusOr<std::string> all =
      ReadFileTool(*f.project, {"a.txt", 1, 2000});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(*all, "     1\tone\n     2\ttwo\n     3\tthree\n");
  absl::StatusOr<std::string> part = ReadFileTool(*f.project, {"a.txt", 2, 1});
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(*part, "     2\ttwo\n[lines 2-2 of 3; read on with offset 3]\n");
  EXPECT_FALSE(ReadFileTool(*f.project, {"a.txt", 9, 1}).ok());
  // An absolute path inside the project is the same file, also through the
  // name the project was opened by.
  EXPECT_TRUE(ReadFileTool(*f.project, {f.root + "/a.txt", 1, 10}).ok());
  Symlink(f.root, f.parent + "/alias");
  absl::StatusOr<std::unique_ptr<Project>> aliased =
      Project::Open(f.parent + "/alias");
  ASSERT_TRUE(aliased.ok());
  EXPECT_TRUE(ReadFileTool(**aliased, {f.parent + "/alias/a.txt", 1, 10}).ok());
  EXPECT_TRUE(ReadFileTool(**aliased, {f.root + "/a.txt", 1, 10}).ok());
  EXPECT_FALSE(ReadFileTool(**aliased, {f.parent + "/secret.txt", 1, 10}).ok());
}

TEST(ReadFileToolTest, NoEscape) {
  Fixture f = MakeFixture("escape");
  // Negative control: the secret is there and readable by path.
  ASSERT_EQ(garuda::testing::Read(f.parent + "/secret.txt"), "TOP SECRET\n");
  Symlink("../secret.txt", f.root + "/link-out");
  Symlink(f.parent + "/secret.txt", f.root + "/abs-link-out");
  Symlink(f.parent, f.root + "/dir-out");
  // Negative control: without RESOLVE_BENEATH the links reach the secret.
  EXPECT_EQ(garuda::testing::Read(f.root + "/link-out"), "TOP SECRET\n");
  EXPECT_EQ(garuda::testing::Read(f.root + "/dir-out/secret.txt"),
            "TOP SECRET\n");
  for (const std::string& path :
       {std::string("../secret.txt"), std::string("src/../../secret.txt"),
        f.parent + "/secret.txt", std::string("/etc/passwd"),
        std::string("link-out"), std::string("abs-link-out"),
        std::string("dir-out/secret.txt")}) {
    absl::StatusOr<std::string> read =
        ReadFileTool(*f.project, {path, 1, 2000});
    ASSERT_FALSE(read.ok()) << path << " read: " << *read;
    EXPECT_TRUE(absl::IsPermissionDenied(read.status())) << read.status();
    EXPECT_NE(read.status().message().find("project"), std::string::npos);
  }
  // A link that stays inside is followed, and reports where it arrived.
  Symlink("src/x.c", f.root + "/inside-link");
  absl::StatusOr<OpenedPath> opened = f.project->OpenForRead("inside-link");
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(opened->relative, "src/x.c");
  EXPECT_TRUE(ReadFileTool(*f.project, {"inside-link", 1, 10}).ok());
  // ".." that stays inside is fine.
  EXPECT_TRUE(ReadFileTool(*f.project, {"src/../a.txt", 1, 10}).ok());
}

TEST(ReadFileToolTest, FoldersFifosAndBinaries) {
  Fixture f = MakeFixture("kinds");
  EXPECT_NE(ReadFileTool(*f.project, {"src", 1, 10})
                .status()
                .message()
                .find("list_files"),
            std::string::npos);
  ASSERT_EQ(::mkfifo((f.root + "/pipe").c_str(), 0644), 0);
  absl::StatusOr<std::string> fifo = ReadFileTool(*f.project, {"pipe", 1, 10});
  EXPECT_FALSE(fifo.ok());  // and did not block
  Write(f.root + "/bin", std::string("\x7f"
                                     "ELF\0\0\1",
                                     7));
  absl::StatusOr<std::string> binary = ReadFileTool(*f.project, {"bin", 1, 10});
  ASSERT_TRUE(binary.ok());
  EXPECT_NE(binary->find("binary file"), std::string::npos);
}

TEST(ListFilesToolTest, ListsRespectingGitignore) {
  Fixture f = MakeFixture("list", /*git=*/true);
  absl::StatusOr<std::string> list = ListFilesTool(*f.project, {"", ""});
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(*list, ".git-not/keep\n.gitignore\na.txt\nsrc/deep/y.c\nsrc/x.c\n");
  absl::StatusOr<std::string> glob = ListFilesTool(*f.project, {"src", "*.c"});
  ASSERT_TRUE(glob.ok());
  EXPECT_EQ(*glob, "src/deep/y.c\nsrc/x.c\n");
  absl::StatusOr<std::string> path_glob =
      ListFilesTool(*f.project, {"", "src/*.c"});
  ASSERT_TRUE(path_glob.ok());
  EXPECT_EQ(*path_glob, "src/x.c\n");
  EXPECT_FALSE(ListFilesTool(*f.project, {"..", ""}).ok());
}

TEST(ListFilesToolTest, WithoutGitEverythingCounts) {
  Fixture f = MakeFixture("list-nogit");
  absl::StatusOr<std::string> list = ListFilesTool(*f.project, {"build", ""});
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(*list, "build/out.o\n");
}

TEST(ListFilesToolTest, LinksAreListedNotFollowed) {
  Fixture f = MakeFixture("list-links");
  Symlink(f.parent, f.root + "/src/out");
  absl::StatusOr<std::string> list = ListFilesTool(*f.project, {"src", ""});
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(*list, "src/deep/y.c\nsrc/out\nsrc/x.c\n");
  EXPECT_FALSE(ListFilesTool(*f.project, {"src/out", ""}).ok());
}

TEST(GrepToolTest, FindsLines) {
  Fixture f = MakeFixture("grep", /*git=*/true);
  absl::StatusOr<std::string> found = GrepTool(*f.project, {"main", "", ""});
  ASSERT_TRUE(found.ok()) << found.status();
  // build/out.o has "main" too, but git ignores it.
  EXPECT_EQ(*found, "src/x.c:2: int main() { return x; }\n");
  absl::StatusOr<std::string> glob = GrepTool(*f.project, {"^int", "", "y.c"});
  ASSERT_TRUE(glob.ok());
  EXPECT_EQ(*glob, "src/deep/y.c:1: int y;\n");
  absl::StatusOr<std::string> one =
      GrepTool(*f.project, {"t[wh]", "a.txt", ""});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, "a.txt:2: two\na.txt:3: three\n");
  absl::StatusOr<std::string> none = GrepTool(*f.project, {"zzz", "", ""});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, "(no matches)\n");
  absl::StatusOr<std::string> bad = GrepTool(*f.project, {"(", "", ""});
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a valid"), std::string::npos);
}

TEST(GrepToolTest, NoEscape) {
  Fixture f = MakeFixture("grep-escape");
  Symlink(f.parent, f.root + "/up");
  Symlink("../secret.txt", f.root + "/s");
  for (const char* path : {"..", "../secret.txt", "up", "s"}) {
    absl::StatusOr<std::string> found =
        GrepTool(*f.project, {"SECRET", path, ""});
    EXPECT_FALSE(found.ok()) << path << ": " << *found;
  }
  // From the root, the links are not followed.
  absl::StatusOr<std::string> all = GrepTool(*f.project, {"SECRET", "", ""});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, "(no matches)\n");
}

}  // namespace
}  // namespace garuda
