#include "lib/terminal/output_tail.h"

#include "gtest/gtest.h"

namespace garuda {
namespace terminal {
namespace {

TEST(LastLinesTest, KeepsTheEndAndCountsTheRest) {
  OutputTail tail = LastLines("1\n2\n3\n4\n5\n", 2);
  EXPECT_EQ(tail.text, "4\n5\n");
  EXPECT_EQ(tail.lines_cut, 3u);
  EXPECT_EQ(tail.total_lines, 5u);
  tail = LastLines("1\n2", 5);
  EXPECT_EQ(tail.text, "1\n2\n");
  EXPECT_EQ(tail.lines_cut, 0u);
  tail = LastLines("only", 1);
  EXPECT_EQ(tail.text, "only\n");
  EXPECT_EQ(LastLines("", 3).total_lines, 0u);
  tail = LastLines("\n\n\n", 2);
  EXPECT_EQ(tail.text, "\n\n");
  EXPECT_EQ(tail.lines_cut, 1u);
}

}  // namespace
}  // namespace terminal
}  // namespace garuda
