// The tree's crash recovery (docs/audit.md, "Durability of the tree"): the
// entries past tree/durable are written without a sync of their own, so a
// power failure can leave them torn, zeroed, lost, or ahead of a log; the
// next open checks them against the lines and rebuilds them from the logs.
// Each case has its control: the damaged tree, read before the open, is not
// the tree of the lines.
#include "lib/audit/tree_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "lib/audit/paths.h"
#include "lib/audit/test_util.h"
#include "lib/audit/tree_verify.h"
#include "lib/audit/verify.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace {

class TreeStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = JoinPath(
        std::getenv("TEST_TMPDIR"),
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    project_ = JoinPath(base_, "project");
    ASSERT_TRUE(MakeDirectories(project_, 0700).ok());
    log_ = TestLog("a", 40);
    lines_ = SplitLines(log_);
  }
  std::string LogPath(const std::string& project) const {
    return JoinPath(project, absl::StrCat("a", kLogSuffix));
  }
  std::string Entries() const {
    return JoinPath(TreeFolderOf(project_), "entries");
  }
  std::unique_ptr<TreeAppender> Open() {
    absl::StatusOr<std::unique_ptr<TreeAppender>> tree =
        TreeAppender::Open(project_, "a");
    EXPECT_TRUE(tree.ok()) << tree.status();
    return tree.ok() ? std::move(tree).value() : nullptr;
  }
  // The first `synced` lines in the tree and synced (an open takes them
  // up), then the rest of the first `written` lines added as a group is:
  // after the log's write, without a sync of the tree.
  void Build(int synced, int written, const NoteSigner* signer = nullptr) {
    std::string head;
    for (int i = 0; i < synced; ++i) head += lines_[i];
    ASSERT_TRUE(WriteFile(LogPath(project_), head).ok());
    std::unique_ptr<TreeAppender> tree = Open();
    ASSERT_NE(tree, nullptr);
    ASSERT_EQ(tree->size(), static_cast<uint64_t>(synced));
    if (signer != nullptr) {
      ASSERT_TRUE(
          tree->WriteSignedCheckpoint(*signer, signer->name + "/project").ok());
      UniqueFd key = OpenFile(JoinPath(TreeFolderOf(project_), "key"),
                              O_WRONLY | O_CREAT | O_TRUNC, 0600)
                         .value();
      ASSERT_TRUE(WriteAll(key.get(), FormatNoteVerifier(
                                          VerifierOf(*signer, kNoteEd25519)))
                      .ok());
    }
    std::string tail;
    for (int i = synced; i < written; ++i) tail += lines_[i];
    UniqueFd fd = OpenFile(LogPath(project_), O_WRONLY | O_APPEND).value();
    ASSERT_TRUE(WriteAll(fd.get(), tail).ok());
    absl::StatusOr<TreeAppender::Lock> lock = tree->LockAndCatchUp();
    ASSERT_TRUE(lock.ok());
    ASSERT_TRUE(tree->AppendLines(tail, head.size()).ok());
  }
  // tree/entries as a tree built afresh from the first `count` lines.
  std::string ExpectedEntries(int count) {
    std::string fresh = JoinPath(base_, absl::StrCat("fresh-", count));
    EXPECT_TRUE(MakeDirectories(fresh, 0700).ok());
    std::string content;
    for (int i = 0; i < count; ++i) content += lines_[i];
    EXPECT_TRUE(WriteFile(LogPath(fresh), content).ok());
    EXPECT_TRUE(TreeAppender::Open(fresh, "a").ok());
    return ReadFileToString(JoinPath(TreeFolderOf(fresh), "entries")).value();
  }
  std::string ReadEntries() const {
    return ReadFileToString(Entries()).value();
  }
  void Overwrite(const std::string& path, uint64_t offset,
                 const std::string& bytes) {
    UniqueFd fd = OpenFile(path, O_WRONLY).value();
    ASSERT_EQ(::pwrite(fd.get(), bytes.data(), bytes.size(), offset),
              static_cast<ssize_t>(bytes.size()));
  }
  static absl::Status WriteFile(const std::string& path,
                                const std::string& content) {
    ASSIGN_OR_RETURN(UniqueFd fd,
                     OpenFile(path, O_WRONLY | O_CREAT | O_TRUNC, 0600));
    return WriteAll(fd.get(), content);
  }

  std::string base_, project_, log_;
  std::vector<std::string> lines_;
};

TEST_F(TreeStoreTest, AGroupIsNotSyncedButTheCloseIs) {
  Build(30, 35);
  std::string durable =
      ReadFileToString(JoinPath(TreeFolderOf(project_), "durable")).value();
  EXPECT_EQ(durable.substr(0, 21), "00000000000000000030 ");
  EXPECT_EQ(ReadEntries(), ExpectedEntries(35));
}

// Entries a power failure zeroed (the file's size written, its blocks not).
TEST_F(TreeStoreTest, ZeroedEntriesPastTheSyncAreRebuiltFromTheLog) {
  Build(30, 40);
  const uint64_t from = TreeEntryOffset(33);
  Overwrite(Entries(), from, std::string(TreeEntryOffset(40) - from, '\0'));
  // Control: the tree as left is not the tree of the lines.
  EXPECT_NE(ReadEntries(), ExpectedEntries(40));
  std::unique_ptr<TreeAppender> tree = Open();
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(tree->size(), 40u);
  EXPECT_EQ(ReadEntries(), ExpectedEntries(40));
}

// A torn entry (part of one written) and garbage in the hashes of another.
TEST_F(TreeStoreTest, TornEntriesPastTheSyncAreRebuiltFromTheLog) {
  Build(30, 40);
  Overwrite(Entries(), TreeEntryOffset(36) + kTreeLeafRecordBytes + 3, "junk");
  ASSERT_EQ(::truncate(Entries().c_str(), TreeEntryOffset(39) + 9), 0);
  EXPECT_NE(ReadEntries().substr(0, TreeEntryOffset(39)),
            ExpectedEntries(40).substr(0, TreeEntryOffset(39)));
  std::unique_ptr<TreeAppender> tree = Open();
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(ReadEntries(), ExpectedEntries(40));
}

// Whole entries lost (a stale tree): taken up again from the log.
TEST_F(TreeStoreTest, LostEntriesAreTakenUpFromTheLog) {
  Build(30, 40);
  ASSERT_EQ(::truncate(Entries().c_str(), TreeEntryOffset(32)), 0);
  EXPECT_EQ(TreeReader::Open(TreeFolderOf(project_))->size(), 32u);
  std::unique_ptr<TreeAppender> tree = Open();
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(ReadEntries(), ExpectedEntries(40));
}

// A tree ahead of its log (the log lost its unsynced tail, the tree's
// entries for it survived): the tree is cut back to the lines that are
// there, so no checkpoint signs lines the log does not hold.
TEST_F(TreeStoreTest, ATreeAheadOfItsLogIsCutBackToTheLog) {
  Build(30, 40);
  std::string kept;
  for (int i = 0; i < 34; ++i) kept += lines_[i];
  ASSERT_EQ(::truncate(LogPath(project_).c_str(), kept.size()), 0);
  // Control: the tree holds leaves whose lines are gone.
  EXPECT_EQ(TreeReader::Open(TreeFolderOf(project_))->size(), 40u);
  std::unique_ptr<TreeAppender> tree = Open();
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(tree->size(), 34u);
  EXPECT_EQ(ReadEntries(), ExpectedEntries(34));
}

// What was synced is never rewritten by the recovery: a line changed in
// the synced part stays a mismatch for verify to report. (Control: the
// same change past the sync is repaired, as the tests above show.)
TEST_F(TreeStoreTest, TheSyncedPartIsNotRepairedOver) {
  Build(30, 40);
  Overwrite(Entries(), TreeEntryOffset(10) + kTreeLeafRecordBytes, "junk");
  const std::string damaged = ReadEntries();
  std::unique_ptr<TreeAppender> tree = Open();
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(ReadEntries().substr(0, TreeEntryOffset(30)),
            damaged.substr(0, TreeEntryOffset(30)));
  EXPECT_NE(ReadEntries(), ExpectedEntries(40));
}

// A torn or lying tree/durable: its root is not the tree's, so the whole
// tree is checked and the damage below its size repaired too.
TEST_F(TreeStoreTest, ATornDurableMarkMeansTheWholeTreeIsChecked) {
  Build(30, 40);
  Overwrite(Entries(), TreeEntryOffset(10) + kTreeLeafRecordBytes, "junk");
  Overwrite(JoinPath(TreeFolderOf(project_), "durable"), 30, "AAAA");
  std::unique_ptr<TreeAppender> tree = Open();
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(ReadEntries(), ExpectedEntries(40));
}

// An open learns how far each log is in the tree from tree/covered and the
// entries past it, so what it reads of tree/entries does not grow with the
// tree. Control: without tree/covered (a tree from before it) the open
// reads the whole tree, and both opens end with the same tree.
TEST_F(TreeStoreTest, AnOpenOfALargeTreeReadsOnlyItsTail) {
  constexpr int kLines = 4000, kTail = 10;
  log_ = TestLog("a", kLines + kTail);
  lines_ = SplitLines(log_);
  Build(kLines, kLines + kTail);
  // The tail the group added is past tree/durable and tree/covered.
  const std::string tree_folder = TreeFolderOf(project_);
  const std::string before = ReadEntries();
  const std::string covered =
      ReadFileToString(JoinPath(tree_folder, "covered")).value();
  EXPECT_EQ(covered.substr(0, 21), absl::StrFormat("%020d ", kLines));
  std::unique_ptr<TreeAppender> tree = Open();
  ASSERT_NE(tree, nullptr);
  EXPECT_EQ(tree->size(), static_cast<uint64_t>(kLines + kTail));
  const uint64_t tail_bytes =
      TreeEntryOffset(kLines + kTail) - TreeEntryOffset(kLines);
  // The tail twice (checked against the log, then its coverage) and a few
  // hashes per root check: far below the tree.
  EXPECT_LE(tree->entry_bytes_read(), 2 * tail_bytes + 4096)
      << "of " << TreeEntryOffset(kLines + kTail);
  const std::string after = ReadEntries();
  tree.reset();

  // Control: the same state without tree/covered.
  ASSERT_TRUE(WriteFile(Entries(), before).ok());
  ASSERT_EQ(::unlink(JoinPath(tree_folder, "covered").c_str()), 0);
  std::unique_ptr<TreeAppender> full = Open();
  ASSERT_NE(full, nullptr);
  EXPECT_GE(full->entry_bytes_read(), TreeEntryOffset(kLines));
  EXPECT_EQ(ReadEntries(), after);
  EXPECT_EQ(after, ExpectedEntries(kLines + kTail));
}

// A tree/covered that is not a prefix of the tree (its root is not the
// tree's at its size) is not trusted: the open reads the whole tree and
// misses no line. Control: the same file left whole is trusted.
TEST_F(TreeStoreTest, ACoveredFileOfAnotherTreeIsNotTrusted) {
  Build(30, 30);
  const std::string path = JoinPath(TreeFolderOf(project_), "covered");
  const std::string good = ReadFileToString(path).value();
  {
    std::unique_ptr<TreeAppender> tree = Open();
    ASSERT_NE(tree, nullptr);
    EXPECT_LT(tree->entry_bytes_read(), TreeEntryOffset(30));
  }
  // It claims all of log "a" is covered, under another root.
  std::string lying = good;
  lying.replace(21, 4, "AAAA");
  lying.replace(lying.rfind('\n', lying.size() - 2) + 1, std::string::npos,
                absl::StrCat(log_.size() + 1000, "\n"));
  ASSERT_TRUE(WriteFile(path, lying).ok());
  std::string more;
  for (int i = 30; i < 35; ++i) more += lines_[i];
  UniqueFd fd = OpenFile(LogPath(project_), O_WRONLY | O_APPEND).value();
  ASSERT_TRUE(WriteAll(fd.get(), more).ok());
  std::unique_ptr<TreeAppender> tree = Open();
  ASSERT_NE(tree, nullptr);
  EXPECT_GE(tree->entry_bytes_read(), TreeEntryOffset(30));
  EXPECT_EQ(tree->size(), 35u);
  EXPECT_EQ(ReadEntries(), ExpectedEntries(35));
}

// verify, between the power failure and the next open: a torn tail past
// tree/durable and the signed checkpoint is reported as such, not as a
// finding, and the lines under the signature are still checked. Control:
// the same damage under the signed checkpoint is a tree_mismatch.
TEST_F(TreeStoreTest, VerifyCallsATornTailPastTheSignatureATornTail) {
  const NoteSigner signer = GenerateNoteSigner("test.example/tree").value();
  Build(30, 40, &signer);
  TreeVerifyOptions options;
  options.project_folder = project_;
  options.dir = "project";
  ASSERT_EQ(VerifyTree(options)->status(), kStatusOk)
      << VerifyTree(options)->message();
  const std::string intact = ReadEntries();
  const uint64_t from = TreeEntryOffset(33);
  Overwrite(Entries(), from, std::string(TreeEntryOffset(40) - from, '\0'));
  audit::LogReport torn = *VerifyTree(options);
  EXPECT_EQ(torn.status(), kStatusTornTail) << torn.message();
  EXPECT_FALSE(IsFailure(torn));
  EXPECT_NE(torn.message().find("from leaf 33 on"), std::string::npos)
      << torn.message();
  // Control: the same damage under the signed checkpoint.
  ASSERT_TRUE(WriteFile(Entries(), intact).ok());
  Overwrite(Entries(), TreeEntryOffset(20),
            std::string(TreeEntryOffset(21) - TreeEntryOffset(20), '\0'));
  audit::LogReport under = *VerifyTree(options);
  EXPECT_EQ(under.status(), kStatusTreeMismatch) << under.message();
  EXPECT_TRUE(IsFailure(under));
}

}  // namespace
}  // namespace garuda
