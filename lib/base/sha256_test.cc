#include "lib/base/sha256.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"
#include "lib/base/unique_fd.h"

namespace garuda {
namespace {

constexpr char kEmpty[] =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr char kAbc[] =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr char kTwoBlocks[] =
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
constexpr char kMillionA[] =
    "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";

// Known answers (FIPS 180-2's examples and the empty string), so that the
// audit chains and the change lists' fingerprints stay byte-identical
// whichever OpenSSL interface computes them.
TEST(Sha256Test, KnownAnswers) {
  EXPECT_EQ(Sha256Hex(""), kEmpty);
  EXPECT_EQ(Sha256Hex("abc"), kAbc);
  EXPECT_EQ(
      Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      kTwoBlocks);
  EXPECT_EQ(absl::BytesToHexString(Sha256Bytes("abc")), kAbc);
  // Negative control: one byte more gives another digest.
  EXPECT_NE(Sha256Hex("abcd"), kAbc);
}

TEST(Sha256Test, PiecesAndReuseGiveTheSameDigest) {
  Sha256 sha;
  sha.Update("a").Update("bc");
  EXPECT_EQ(HexDigest(sha.Finish()), kAbc);
  // Finish starts a new message.
  EXPECT_EQ(HexDigest(sha.Finish()), kEmpty);
  sha.Update("abc");
  EXPECT_EQ(HexDigest(sha.Finish()), kAbc);
}

TEST(Sha256Test, OfFdReadsPastItsBuffer) {
  // One million 'a': FIPS 180-2's third example, read in 64 KiB pieces.
  UniqueFd fd(::memfd_create("sha256_test", MFD_CLOEXEC));
  ASSERT_TRUE(fd);
  std::string data(1000000, 'a');
  ASSERT_EQ(::write(fd.get(), data.data(), data.size()),
            static_cast<ssize_t>(data.size()));
  ASSERT_EQ(::lseek(fd.get(), 0, SEEK_SET), 0);
  absl::StatusOr<std::string> digest = Sha256OfFd(fd.get());
  ASSERT_TRUE(digest.ok()) << digest.status();
  EXPECT_EQ(absl::BytesToHexString(*digest), kMillionA);
  EXPECT_EQ(*digest, Sha256Bytes(data));
}

TEST(Sha256Test, OfFdNamesAReadError) {
  UniqueFd fd(::memfd_create("sha256_test", MFD_CLOEXEC));
  ASSERT_TRUE(fd);
  int write_only = ::open(("/proc/self/fd/" + std::to_string(fd.get())).c_str(),
                          O_WRONLY | O_CLOEXEC);
  ASSERT_GE(write_only, 0);
  UniqueFd guard(write_only);
  absl::StatusOr<std::string> digest = Sha256OfFd(write_only);
  EXPECT_FALSE(digest.ok());
  EXPECT_NE(digest.status().message().find("read"), std::string::npos)
      << digest.status();
}

TEST(Sha256Test, HexDigestsAreExactly64LowercaseDigits) {
  EXPECT_TRUE(IsHexDigest(kAbc));
  EXPECT_FALSE(IsHexDigest(std::string(kAbc).substr(1)));
  std::string upper = kAbc;
  upper[0] = 'B';
  EXPECT_FALSE(IsHexDigest(upper));
}

}  // namespace
}  // namespace garuda
