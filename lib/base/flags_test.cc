#include "lib/base/flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "gtest/gtest.h"

ABSL_FLAG(int, channel_fd, -1, "test flag");
ABSL_FLAG(std::string, accept_weaker_lockdown, "", "test flag");

namespace garuda {
namespace {

TEST(ParseProgramFlagsTest, ReadsDashedNamesAndKeepsPositionals) {
  std::vector<std::string> args = {
      "prog", "--channel-fd=7",  "serve", "--accept-weaker-lockdown=old-kernel",
      "--",   "--not-a-flag=x-y"};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  std::vector<std::string> positional =
      ParseProgramFlags(static_cast<int>(argv.size()), argv.data(), "usage");
  EXPECT_EQ(absl::GetFlag(FLAGS_channel_fd), 7);
  EXPECT_EQ(absl::GetFlag(FLAGS_accept_weaker_lockdown), "old-kernel");
  // Values keep their dashes; what follows "--" is left alone.
  EXPECT_EQ(positional,
            (std::vector<std::string>{"prog", "serve", "--not-a-flag=x-y"}));
}

}  // namespace
}  // namespace garuda
