#include "lib/ipc/sealed_memfd.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"

namespace garuda {
namespace ipc {
namespace {

TEST(SealedMemfdTest, ASealedMemfdPassesAndCannotChange) {
  auto fd = SealedMemfd("test", [](int fd) { return WriteAll(fd, "list"); });
  ASSERT_TRUE(fd.ok()) << fd.status();
  EXPECT_TRUE(CheckSealed(fd->get(), "the list").ok());
  EXPECT_EQ(::lseek(fd->get(), 0, SEEK_CUR), 0);
  EXPECT_LT(::write(fd->get(), "x", 1), 0);
  EXPECT_LT(::ftruncate(fd->get(), 0), 0);
  char buffer[8];
  EXPECT_EQ(::read(fd->get(), buffer, sizeof(buffer)), 4);
}

// The negative controls: the same bytes in a memfd without seals, with
// some seals only, and in a plain file are refused, each naming what is
// missing.
TEST(SealedMemfdTest, UnsealedDescriptorsAreRefused) {
  UniqueFd open(::memfd_create("open", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  ASSERT_TRUE(open);
  ASSERT_TRUE(WriteAll(open.get(), "list").ok());
  absl::Status status = CheckSealed(open.get(), "the list");
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_TRUE(absl::StrContains(status.message(), "F_SEAL_WRITE")) << status;
  // It can still change: the reason it is refused.
  EXPECT_EQ(::write(open.get(), "x", 1), 1);

  ASSERT_EQ(::fcntl(open.get(), F_ADD_SEALS, F_SEAL_WRITE), 0);
  status = CheckSealed(open.get(), "the list");
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), "F_SEAL_SEAL")) << status;

  UniqueFd no_sealing(::memfd_create("plain", MFD_CLOEXEC));
  ASSERT_TRUE(no_sealing);
  EXPECT_FALSE(CheckSealed(no_sealing.get(), "the list").ok());

  UniqueFd file(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(file);
  status = CheckSealed(file.get(), "the list");
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), "not a sealed memfd"))
      << status;
}

}  // namespace
}  // namespace ipc
}  // namespace garuda
