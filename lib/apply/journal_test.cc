#include "lib/apply/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/changeset/test_tree.h"

namespace garuda::apply_internal {
namespace {

using testing::NewTempDir;
using testing::Read;
using testing::Write;

JournalPlan Sample() {
  JournalPlan plan;
  plan.work_name = ".garuda-apply-1";
  plan.temps.push_back({"src", ".garuda-new-1-1"});
  plan.temps.push_back({"", "name\twith\ntabs"});
  plan.steps.push_back({StepKind::kMoveAside, "d", "old-2", true, 0, 0});
  plan.steps.push_back(
      {StepKind::kExchange, "src/a\nb.txt", ".garuda-new-1-1", false, 0, 0});
  plan.steps.push_back({StepKind::kChangeMode, "src", "", false, 0700, 0755});
  return plan;
}

TEST(JournalTest, RoundTripsWithAwkwardNames) {
  std::string record = NewTempDir("journal");
  absl::StatusOr<UniqueFd> fd = WriteJournal(record, Sample());
  ASSERT_TRUE(fd.ok()) << fd.status();
  absl::StatusOr<JournalPlan> read = ReadJournal(record);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_FALSE(read->committed);
  ASSERT_EQ(read->steps.size(), 3u);
  EXPECT_EQ(read->steps[1].path, "src/a\nb.txt");
  EXPECT_EQ(read->steps[2].mode, 0700u);
  EXPECT_EQ(read->steps[2].old_mode, 0755u);
  EXPECT_EQ(read->temps[1].name, "name\twith\ntabs");
  ASSERT_TRUE(MarkCommitted(fd->get(), record).ok());
  read = ReadJournal(record);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->committed);
}

TEST(JournalTest, ALastLineCutShortIsDroppedADamagedOneNamed) {
  std::string record = NewTempDir("journal");
  ASSERT_TRUE(WriteJournal(record, Sample()).ok());
  std::string path = record + "/journal";
  std::string text = Read(path);
  // Cut in its last line: that line was never synced, so no step of it ran.
  Write(path, text.substr(0, text.size() - 4));
  absl::StatusOr<JournalPlan> read = ReadJournal(record);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->steps.size(), 2u);
  // Control: a whole line that does not parse is an error naming the line.
  Write(path, text + "step\tteleport\tx\t\t0\t0\t0\n");
  read = ReadJournal(record);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("journal:7:"), std::string::npos)
      << read.status();
  // Not a regular file: refused without reading it.
  ::unlink(path.c_str());
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  read = ReadJournal(record);
  EXPECT_FALSE(read.ok());
  EXPECT_NE(read.status().message().find("not a regular file"),
            std::string::npos)
      << read.status();
}

}  // namespace
}  // namespace garuda::apply_internal
