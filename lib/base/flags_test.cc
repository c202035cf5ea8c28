#include "lib/base/flags.h"

#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/version.h"
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

ABSL_FLAG(std::string, base_url, "", "test flag");
ABSL_FLAG(std::string, output_format, "text", "test flag");
ABSL_FLAG(bool, lsp, true, "test flag");
ABSL_FLAG(std::string, p, "", "test flag");

namespace garuda {
namespace {

absl::StatusOr<std::vector<std::string>> Parse(std::vector<std::string> args,
                                               std::string* exit_text) {
  args.insert(args.begin(), "/usr/bin/garuda-test");
  return ParseFlags(args, exit_text);
}

std::string ErrorOf(std::vector<std::string> args) {
  std::string exit_text;
  auto parsed = Parse(std::move(args), &exit_text);
  return parsed.ok() ? "ok" : std::string(parsed.status().message());
}

TEST(ParseFlagsTest, AnUnknownFlagSuggestsTheCloseOne) {
  EXPECT_EQ(ErrorOf({"--base-ur=x"}),
            "unknown flag --base-ur; did you mean --base-url? (garuda-test "
            "--help lists the flags)");
  EXPECT_EQ(ErrorOf({"--bsae-url", "x"}),
            "unknown flag --bsae-url; did you mean --base-url? (garuda-test "
            "--help lists the flags)");
  EXPECT_EQ(ErrorOf({"--output", "json"}),
            "unknown flag --output; did you mean --output-format? (garuda-test "
            "--help lists the flags)");
  EXPECT_EQ(ErrorOf({"--zzzzzzzz"}),
            "unknown flag --zzzzzzzz (garuda-test --help lists the flags)");
  // Abseil's own flags are not ours to take.
  EXPECT_NE(ErrorOf({"--flagfile=/etc/passwd"}), "ok");
}

TEST(ParseFlagsTest, ValuesBoolsAndPositionals) {
  std::string exit_text;
  auto parsed = Parse({"run", "--channel-fd", "9", "--nolsp", "-p", "hi there",
                       "--", "--base-url=not-a-flag"},
                      &exit_text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(absl::GetFlag(FLAGS_channel_fd), 9);
  EXPECT_FALSE(absl::GetFlag(FLAGS_lsp));
  EXPECT_EQ(absl::GetFlag(FLAGS_p), "hi there");
  EXPECT_EQ(*parsed, (std::vector<std::string>{"/usr/bin/garuda-test", "run",
                                               "--base-url=not-a-flag"}));
  EXPECT_TRUE(exit_text.empty());
  parsed = Parse({"--lsp"}, &exit_text);
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(absl::GetFlag(FLAGS_lsp));
}

TEST(ParseFlagsTest, BadValuesAndMissingValuesAreUsageErrors) {
  EXPECT_EQ(ErrorOf({"--channel-fd=three"}),
            "--channel-fd takes a whole number, not \"three\" (garuda-test "
            "--help lists the flags)");
  EXPECT_EQ(ErrorOf({"--base-url"}),
            "--base-url needs a value (--base-url=VALUE or --base-url VALUE) "
            "(garuda-test --help lists the flags)");
  EXPECT_EQ(ErrorOf({"--nolsp=1"}),
            "--nolsp takes no value (garuda-test --help lists the flags)");
}

TEST(ParseFlagsTest, HelpAndVersion) {
  for (const char* spelled : {"--help", "-h", "-help"}) {
    std::string exit_text;
    auto parsed = Parse({"serve", spelled}, &exit_text);
    ASSERT_TRUE(parsed.ok());
    EXPECT_TRUE(absl::StrContains(exit_text, "--base-url")) << exit_text;
    EXPECT_TRUE(absl::StrContains(exit_text, "--output-format (default \"text\")"))
        << exit_text;
    EXPECT_FALSE(absl::StrContains(exit_text, "helpfull")) << exit_text;
    EXPECT_FALSE(absl::StrContains(exit_text, "base_url")) << exit_text;
  }
  std::string exit_text;
  ASSERT_TRUE(Parse({"--version"}, &exit_text).ok());
  EXPECT_EQ(exit_text, absl::StrCat("garuda-test ", kGarudaVersion, "\n"));
}

}  // namespace
}  // namespace garuda
