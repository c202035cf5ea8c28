#include "lib/tools/edit_tools.h"

#include "gtest/gtest.h"
#include "lib/apply/apply.h"
#include "lib/base/sha256.h"
#include "lib/changeset/beneath.h"
#include "lib/changeset/test_tree.h"
#include "lib/tools/test_project.h"

namespace garuda {
namespace {

using garuda::testing::Read;
using garuda::testing::Symlink;
using garuda::testing::Write;

using Fixture = garuda::testing::TestProject;

Fixture MakeFixture(const std::string& label) {
  return garuda::testing::MakeTestProject(
      label, [](const std::string& parent, const std::string& root) {
        Write(parent + "/outside.txt", "outside\n");
        Write(root + "/src/a.c", "int a = 1;\nint b = 1;\nint c = 2;\n", 0640);
      });
}

ApplyResult Apply(const Fixture& f, const ChangeSet& set) {
  ApplyOptions options;
  options.project = f.root;
  absl::StatusOr<ApplyResult> result = ApplyChangeSet(set, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : ApplyResult{};
}

TEST(EditFileTest, OneMatchMakesAOneFileChangeSetTheApplierTakes) {
  Fixture f = MakeFixture("edit");
  absl::StatusOr<ProposedEdit> edit = ProposeEditFile(
      *f.project, {"src/a.c", "int c = 2;", "int c = 3;", false});
  ASSERT_TRUE(edit.ok()) << edit.status();
  EXPECT_EQ(edit->relative, "src/a.c");
  EXPECT_EQ(edit->replacements, 1);
  ASSERT_EQ(edit->change_set.changes.size(), 1u);
  const ChangeEntry& entry = edit->change_set.changes[0].entry;
  EXPECT_EQ(entry.kind(), CHANGE_KIND_MODIFIED);
  EXPECT_EQ(entry.base().type(), FILE_TYPE_REGULAR);
  EXPECT_EQ(entry.base().mode(), 0640u);
  EXPECT_EQ(entry.new_mode(), 0640u);
  EXPECT_EQ(entry.base().sha256(),
            Sha256Bytes("int a = 1;\nint b = 1;\nint c = 2;\n"));
  EXPECT_NE(edit->question_text.find("-int c = 2;"), std::string::npos)
      << edit->question_text;
  EXPECT_NE(edit->question_text.find("+int c = 3;"), std::string::npos);
  // Nothing is written by the proposal.
  EXPECT_EQ(Read(f.root + "/src/a.c"), "int a = 1;\nint b = 1;\nint c = 2;\n");
  ApplyResult result = Apply(f, edit->change_set);
  EXPECT_EQ(result.outcome, ApplyOutcome::kApplied);
  EXPECT_EQ(Read(f.root + "/src/a.c"), "int a = 1;\nint b = 1;\nint c = 3;\n");
}

TEST(EditFileTest, FileChangedMeanwhileIsAConflict) {
  Fixture f = MakeFixture("conflict");
  absl::StatusOr<ProposedEdit> edit = ProposeEditFile(
      *f.project, {"src/a.c", "int a = 1;", "int a = 5;", false});
  ASSERT_TRUE(edit.ok());
  Write(f.root + "/src/a.c", "the person's own edit\n", 0640);
  ApplyResult result = Apply(f, edit->change_set);
  EXPECT_EQ(result.outcome, ApplyOutcome::kConflict);
  EXPECT_EQ(Read(f.root + "/src/a.c"), "the person's own edit\n");
}

TEST(EditFileTest, ZeroOrSeveralMatches) {
  Fixture f = MakeFixture("matches");
  absl::StatusOr<ProposedEdit> none =
      ProposeEditFile(*f.project, {"src/a.c", "int d", "int e", false});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("not found"), std::string::npos);
  absl::StatusOr<ProposedEdit> two =
      ProposeEditFile(*f.project, {"src/a.c", "= 1;", "= 7;", false});
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("matches 2 times"), std::string::npos)
      << two.status();
  EXPECT_NE(two.status().message().find("lines 1, 2"), std::string::npos);
  EXPECT_NE(two.status().message().find("replace_all"), std::string::npos);
  absl::StatusOr<ProposedEdit> all =
      ProposeEditFile(*f.project, {"src/a.c", "= 1;", "= 7;", true});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->replacements, 2);
  EXPECT_EQ(all->change_set.changes[0].content,
            "int a = 7;\nint b = 7;\nint c = 2;\n");
  EXPECT_FALSE(ProposeEditFile(*f.project, {"src/a.c", "", "x", false}).ok());
  EXPECT_FALSE(
      ProposeEditFile(*f.project, {"src/a.c", "int", "int", false}).ok());
  EXPECT_FALSE(
      ProposeEditFile(*f.project, {"src/none.c", "a", "b", false}).ok());
}

TEST(EditFileTest, NoEditThroughLinksOrOutside) {
  Fixture f = MakeFixture("edit-escape");
  Symlink("../outside.txt", f.root + "/out");
  Symlink("src", f.root + "/srclink");
  Symlink(f.parent, f.root + "/up");
  for (const std::string& path :
       {std::string("out"), std::string("srclink/a.c"),
        std::string("up/outside.txt"), std::string("../outside.txt"),
        f.parent + "/outside.txt"}) {
    absl::StatusOr<ProposedEdit> edit =
        ProposeEditFile(*f.project, {path, "outside", "changed", false});
    EXPECT_FALSE(edit.ok()) << path;
    absl::StatusOr<ProposedEdit> write =
        ProposeWriteFile(*f.project, {path, "changed\n"});
    EXPECT_FALSE(write.ok()) << path;
  }
  EXPECT_EQ(Read(f.parent + "/outside.txt"), "outside\n");
}

TEST(WriteFileTest, NewFileAndReplacement) {
  Fixture f = MakeFixture("write");
  absl::StatusOr<ProposedEdit> created =
      ProposeWriteFile(*f.project, {"docs/new.md", "# New\n"});
  ASSERT_TRUE(created.ok()) << created.status();
  const ChangeEntry& entry = created->change_set.changes[0].entry;
  EXPECT_EQ(entry.kind(), CHANGE_KIND_ADDED);
  EXPECT_EQ(entry.base().type(), FILE_TYPE_ABSENT);
  EXPECT_EQ(entry.new_mode(), 0644u);
  EXPECT_NE(created->question_text.find("A docs/new.md"), std::string::npos)
      << created->question_text;
  EXPECT_EQ(Apply(f, created->change_set).outcome, ApplyOutcome::kApplied);
  EXPECT_EQ(Read(f.root + "/docs/new.md"), "# New\n");

  absl::StatusOr<ProposedEdit> replaced =
      ProposeWriteFile(*f.project, {"src/a.c", "int z;\n"});
  ASSERT_TRUE(replaced.ok());
  EXPECT_EQ(replaced->change_set.changes[0].entry.kind(), CHANGE_KIND_MODIFIED);
  EXPECT_EQ(Apply(f, replaced->change_set).outcome, ApplyOutcome::kApplied);
  EXPECT_EQ(Read(f.root + "/src/a.c"), "int z;\n");
  EXPECT_FALSE(ProposeWriteFile(*f.project, {"src/a.c", "int z;\n"}).ok());
  EXPECT_FALSE(ProposeWriteFile(*f.project, {"src", "x"}).ok());
}

TEST(WriteFileTest, HiddenCharactersVisibleAndSensitiveMarked) {
  Fixture f = MakeFixture("visible");
  absl::StatusOr<ProposedEdit> write =
      ProposeWriteFile(*f.project, {"config/.env",
                                    "KEY=1\xe2\x80\xae"
                                    "evil\n"});
  ASSERT_TRUE(write.ok()) << write.status();
  EXPECT_TRUE(write->change_set.changes[0].entry.sensitive());
  EXPECT_NE(write->question_text.find("<U+202E>"), std::string::npos)
      << write->question_text;
  EXPECT_EQ(write->question_text.find("\xe2\x80\xae"), std::string::npos);
  EXPECT_NE(write->question_text.find("SENSITIVE"), std::string::npos);
}

}  // namespace
}  // namespace garuda
