#include "lib/base/unique_fd.h"

#include <fcntl.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace garuda {
namespace {

bool IsOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(UniqueFdTest, ClosesOnceWhenDestroyed) {
  int raw = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(raw, 0);
  {
    UniqueFd fd(raw);
    EXPECT_TRUE(IsOpen(raw));
  }
  EXPECT_FALSE(IsOpen(raw));
}

TEST(UniqueFdTest, MoveTransfersOwnership) {
  UniqueFd a(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  int raw = a.get();
  UniqueFd b(std::move(a));
  EXPECT_FALSE(a.valid());
  EXPECT_EQ(b.get(), raw);
  UniqueFd c;
  c = std::move(b);
  EXPECT_EQ(c.get(), raw);
  EXPECT_TRUE(IsOpen(raw));
  int released = c.Release();
  EXPECT_FALSE(c.valid());
  EXPECT_TRUE(IsOpen(released));
  ::close(released);
}

}  // namespace
}  // namespace garuda
