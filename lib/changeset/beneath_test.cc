#include "lib/changeset/beneath.h"

#include <fcntl.h>
#include <unistd.h>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"
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

// Known answers (FIPS 180-2's examples and the empty string), so that the
// fingerprints stay byte-identical whichever OpenSSL interface computes them.
TEST(Sha256Test, KnownAnswers) {
  EXPECT_EQ(absl::BytesToHexString(Sha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(absl::BytesToHexString(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(absl::BytesToHexString(Sha256(
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // Negative control: one byte more gives another digest.
  EXPECT_NE(absl::BytesToHexString(Sha256("abcd")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Test, OfFdReadsPastItsBuffer) {
  // One million 'a': FIPS 180-2's third example, read in 64 KiB pieces.
  std::string base = testing::NewTempDir("sha");
  testing::Write(base + "/a", std::string(1000000, 'a'), 0644);
  UniqueFd fd(::open((base + "/a").c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  auto digest = Sha256OfFd(fd.get());
  ASSERT_TRUE(digest.ok()) << digest.status();
  EXPECT_EQ(absl::BytesToHexString(*digest),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(*digest, Sha256(std::string(1000000, 'a')));
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
  EXPECT_EQ(file->sha256(), Sha256("content"));
  auto link = FingerprintBeneath(root->get(), "l");
  ASSERT_TRUE(link.ok());
  EXPECT_EQ(link->type(), FILE_TYPE_SYMLINK);
  EXPECT_EQ(link->sha256(), Sha256("f"));
  auto absent = FingerprintBeneath(root->get(), "no/such");
  ASSERT_TRUE(absent.ok());
  EXPECT_EQ(absent->type(), FILE_TYPE_ABSENT);
  auto under_file = FingerprintBeneath(root->get(), "f/x");
  ASSERT_TRUE(under_file.ok());
  EXPECT_EQ(under_file->type(), FILE_TYPE_ABSENT);
}

}  // namespace
}  // namespace garuda
