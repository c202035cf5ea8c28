#include "lib/changeset/changeset.h"

#include <fcntl.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "lib/changeset/beneath.h"
#include "lib/changeset/frame_stream.h"
#include "lib/changeset/test_tree.h"

namespace garuda {
namespace {

ChangeSet Sample(const std::string& content) {
  ChangeSet change_set;
  change_set.header.set_source("copy");
  change_set.changes.push_back(testing::AddedFile("big\nname\xff", content));
  change_set.summary.set_incomplete(true);
  change_set.summary.set_incomplete_reason("test");
  return change_set;
}

std::string Serialize(const ChangeSet& change_set) {
  std::string path = testing::NewTempDir("cs") + "/cs";
  auto fd = OpenFile(path, O_RDWR | O_CREAT, 0600);
  EXPECT_TRUE(fd.ok());
  EXPECT_TRUE(WriteChangeSet(change_set, fd->get(), "test").ok());
  return testing::Read(path);
}

absl::StatusOr<ChangeSet> Parse(const std::string& bytes) {
  std::string path = testing::NewTempDir("cs") + "/cs";
  testing::Write(path, bytes);
  auto fd = OpenFile(path, O_RDONLY);
  EXPECT_TRUE(fd.ok());
  return ReadChangeSet(fd->get(), "test");
}

TEST(ChangeSetStreamTest, LargeContentRoundTripsInSeveralFrames) {
  std::string content(3 * kContentChunkBytes + 17, 'x');
  content[12345] = '\0';
  std::string bytes = Serialize(Sample(content));
  absl::StatusOr<ChangeSet> read = Parse(bytes);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->changes.size(), 1u);
  EXPECT_EQ(read->changes[0].entry.path(), "big\nname\xff");
  EXPECT_EQ(read->changes[0].content, content);
  EXPECT_TRUE(read->summary.incomplete());
}

TEST(ChangeSetStreamTest, TruncatedStreamIsRefused) {
  std::string bytes = Serialize(Sample(std::string(1000, 'y')));
  for (size_t cut : {bytes.size() - 1, bytes.size() - 20, size_t{10}}) {
    absl::StatusOr<ChangeSet> read = Parse(bytes.substr(0, cut));
    EXPECT_FALSE(read.ok()) << cut;
  }
}

TEST(ChangeSetStreamTest, ContentNotMatchingItsHashIsRefused) {
  ChangeSet change_set = Sample("hello");
  change_set.changes[0].entry.set_new_sha256(Sha256Bytes("other"));
  absl::StatusOr<ChangeSet> read = Parse(Serialize(change_set));
  EXPECT_TRUE(absl::IsDataLoss(read.status())) << read.status();
  EXPECT_TRUE(IsContentMismatch(read.status())) << read.status();
  // Control: a damaged stream is not a content mismatch.
  std::string bytes = Serialize(Sample("hello"));
  absl::StatusOr<ChangeSet> cut = Parse(bytes.substr(0, bytes.size() - 3));
  EXPECT_FALSE(cut.ok());
  EXPECT_FALSE(IsContentMismatch(cut.status())) << cut.status();
}

TEST(ChangeSetStreamTest, GarbageIsRefused) {
  EXPECT_FALSE(Parse("").ok());
  EXPECT_FALSE(Parse("\x05\x00\x00\x00hello").ok());
  EXPECT_FALSE(Parse(std::string("\xff\xff\xff\x7f", 4)).ok());
}

}  // namespace
}  // namespace garuda
