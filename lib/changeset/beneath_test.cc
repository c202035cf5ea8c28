#include "lib/changeset/beneath.h"

#include <fcntl.h>
#include <unistd.h>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"
#include "lib/base/sha256.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/test_tree.h"

namespace garuda {
namespace {

TEST(CheckRelativePathTest, RefusesEscapes) {
  EXPECT_TRUE(CheckRelativePath("a/b c/\xff").ok());
  for (const char* bad :
       {"", "/etc/passwd", "../x", "a/../b", "a//b", "./a", "a/", "a/.."}) {
    EXPECT_FALSE(CheckRelativePath(bad).ok()) << bad;
  }
  EXPECT_FALSE(CheckRelativePath(std::string("a\0b", 3)).ok());
}

TEST(OpenBeneathTest, RefusesASymlinkedParent) {
  std::string base = testing::NewTempDir("beneath");
  testing::MakeDir(base + "/root/real");
  testing::MakeDir(base + "/outside");
  testing::Symlink(base + "/outside", base + "/root/link");
  testing::Symlink("real", base + "/root/inner");
  auto root = OpenRoot(base + "/root");
  ASSERT_TRUE(root.ok());
  EXPECT_TRUE(OpenBeneath(root->get(), "real", O_RDONLY | O_DIRECTORY).ok());
  auto through = OpenParentBeneath(root->get(), "link/file");
  EXPECT_TRUE(absl::IsFailedPrecondition(through.status())) << through.status();
  EXPECT_FALSE(OpenParentBeneath(root->get(), "inner/file").ok());
  // Negative control: a plain open follows the link out of the root.
  int fd = ::openat(root->get(), "link", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  ::close(fd);
}

TEST(FingerprintTest, DescribesEachType) {
  std::string base = testing::NewTempDir("fp");
  testing::Write(base + "/f", "content", 0640);
  testing::Symlink("f", base + "/l");
  auto root = OpenRoot(base);
  ASSERT_TRUE(root.ok());
  auto file = FingerprintBeneath(root->get(), "f");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(file->type(), FILE_TYPE_REGULAR);
  EXPECT_EQ(file->mode(), 0640u);
  EXPECT_EQ(file->sha256(), Sha256Bytes("content"));
  auto link = FingerprintBeneath(root->get(), "l");
  ASSERT_TRUE(link.ok());
  EXPECT_EQ(link->type(), FILE_TYPE_SYMLINK);
  EXPECT_EQ(link->sha256(), Sha256Bytes("f"));
  auto absent = FingerprintBeneath(root->get(), "no/such");
  ASSERT_TRUE(absent.ok());
  EXPECT_EQ(absent->type(), FILE_TYPE_ABSENT);
  auto under_file = FingerprintBeneath(root->get(), "f/x");
  ASSERT_TRUE(under_file.ok());
  EXPECT_EQ(under_file->type(), FILE_TYPE_ABSENT);
}

}  // namespace
}  // namespace garuda
