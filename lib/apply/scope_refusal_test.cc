// A job's applier (T6): a change list with a path outside the scope is
// refused whole, and a path inside the scope that reaches outside through
// a link planted after the list was made is refused at the write.
#include "lib/apply/scope_refusal.h"

#include <unistd.h>

#include "gtest/gtest.h"
#include "lib/apply/apply.h"
#include "lib/changeset/builder.h"
#include "lib/changeset/test_tree.h"

namespace garuda {
namespace {

using testing::Read;
using testing::Remove;
using testing::Snapshot;
using testing::Write;

ChangeSet Build(const testing::ProjectPair& pair) {
  BuildOptions options;
  options.project = pair.project;
  absl::StatusOr<ChangeSet> change_set = BuildFromCopy(pair.staged, options);
  EXPECT_TRUE(change_set.ok()) << change_set.status();
  EXPECT_TRUE(LoadContents(&*change_set).ok());
  return *std::move(change_set);
}

ApplyOptions Scoped(const testing::ProjectPair& pair, bool scoped) {
  ApplyOptions options;
  options.project = pair.project;
  options.undo_root = pair.base + "/undo";
  if (scoped) options.write_scope = std::vector<std::string>{"src"};
  return options;
}

TEST(ScopeRefusalTest, APathOutsideTheScopeRefusesTheWholeList) {
  for (bool scoped : {true, false}) {
    testing::ProjectPair pair = testing::MakeProjectPair("scope");
    Write(pair.staged + "/src/x.c", "int x = 1;\n");
    Write(pair.staged + "/a.txt", "outside\n");
    auto before = Snapshot(pair.project);
    absl::StatusOr<ApplyResult> applied =
        ApplyChangeSet(Build(pair), Scoped(pair, scoped));
    ASSERT_TRUE(applied.ok()) << applied.status();
    if (scoped) {
      EXPECT_EQ(applied->outcome, ApplyOutcome::kRefused);
      ASSERT_EQ(applied->problems.size(), 1u);
      EXPECT_EQ(applied->problems[0],
                "a.txt: outside the job's write scope (writeScope); a job's "
                "applier writes nothing else");
      EXPECT_EQ(Snapshot(pair.project), before);  // src/x.c not written
    } else {
      // Control: the same list without a scope is applied.
      EXPECT_EQ(applied->outcome, ApplyOutcome::kApplied);
      EXPECT_EQ(Read(pair.project + "/a.txt"), "outside\n");
    }
  }
}

TEST(ScopeRefusalTest, ALinkPlantedInTheScopeIsRefusedAtTheWrite) {
  for (bool planted : {true, false}) {
    testing::ProjectPair pair = testing::MakeProjectPair("scope-link");
    Write(pair.project + "/ci/deploy.yml", "deploy: safe\n");
    Write(pair.staged + "/ci/deploy.yml", "deploy: safe\n");
    Write(pair.project + "/src/out/keep", "k\n");
    Write(pair.staged + "/src/out/keep", "k\n");
    Write(pair.staged + "/src/out/deploy.yml", "deploy: evil\n");
    ChangeSet change_set = Build(pair);
    if (planted) {
      // After the list was made and checked against the scope: src/out
      // becomes a link to the folder outside it.
      Remove(pair.project + "/src/out");
      ASSERT_EQ(::symlink("../ci", (pair.project + "/src/out").c_str()), 0);
    }
    absl::StatusOr<ApplyResult> applied =
        ApplyChangeSet(change_set, Scoped(pair, true));
    if (planted) {
      EXPECT_TRUE(!applied.ok() || applied->outcome != ApplyOutcome::kApplied);
      EXPECT_EQ(Read(pair.project + "/ci/deploy.yml"), "deploy: safe\n");
      EXPECT_EQ(::access((pair.project + "/ci/deploy.yml").c_str(), F_OK), 0);
    } else {
      // Control: the real folder in the scope is written.
      ASSERT_TRUE(applied.ok()) << applied.status();
      EXPECT_EQ(applied->outcome, ApplyOutcome::kApplied);
      EXPECT_EQ(Read(pair.project + "/src/out/deploy.yml"), "deploy: evil\n");
    }
  }
}

}  // namespace
}  // namespace garuda
