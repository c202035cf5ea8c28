#include "lib/agent/plain_interaction.h"

#include <fcntl.h>
#include <unistd.h>

#include "gtest/gtest.h"
#include "lib/base/files.h"

namespace garuda {
namespace agent {
namespace {

TEST(PlainInteractionTest, LinesFromADescriptor) {
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  ASSERT_TRUE(WriteAll(fds[1], "first\n\nsecond\nlast without newline").ok());
  ::close(fds[1]);
  auto lines = MakeFdLineSource(fds[0]);
  EXPECT_EQ(lines->ReadLine("> "), "first");
  EXPECT_EQ(lines->ReadLine("> "), "");
  EXPECT_EQ(lines->ReadLine("> "), "second");
  EXPECT_EQ(lines->ReadLine("> "), "last without newline");
  EXPECT_EQ(lines->ReadLine("> "), std::nullopt);
  ::close(fds[0]);
}

TEST(PlainInteractionTest, PrintsPlainlyAndAnswersNo) {
  int text[2], notices[2];
  ASSERT_EQ(::pipe2(text, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(notices, O_CLOEXEC), 0);
  auto interaction = MakePlainInteraction({text[1], notices[1]});
  EXPECT_FALSE(interaction->CanAsk());
  interaction->ShowText("Hello");
  interaction->ShowNotice("a notice");
  interaction->ShowToolCall({"c1", "bash", "bash: make"});
  EXPECT_EQ(interaction->AskPermission({"bash", "Run: make", "", {}}),
            PermissionAnswer::kNo);
  EXPECT_EQ(interaction->AskChangeSet(ChangeSet(), Rendered()),
            Answer::kDiscard);
  ::close(text[1]);
  ::close(notices[1]);
  interaction.reset();
  EXPECT_EQ(*ReadAll(text[0]), "Hello");
  EXPECT_EQ(*ReadAll(notices[0]), "a notice\n[bash: make]\n");
  ::close(text[0]);
  ::close(notices[0]);
}

}  // namespace
}  // namespace agent
}  // namespace garuda
