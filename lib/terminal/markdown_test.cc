#include "lib/terminal/markdown.h"

#include <string>

#include "gtest/gtest.h"

namespace garuda {
namespace terminal {
namespace {

// The escape codes as names, to read the expectations.
std::string Named(std::string text) {
  const std::pair<const char*, const char*> names[] = {
      {"\x1b[1m", "<b>"},      {"\x1b[22m", "</b>"}, {"\x1b[36m", "<code>"},
      {"\x1b[39m", "</code>"}, {"\x1b[2m", "<dim>"}, {"\x1b[0m", "<reset>"},
      {"\x1b[4m", "<u>"}};
  for (const auto& [code, name] : names) {
    size_t at;
    while ((at = text.find(code)) != std::string::npos) {
      text.replace(at, std::string(code).size(), name);
    }
  }
  return text;
}

std::string Render(const std::string& text) {
  MarkdownRenderer renderer;
  return Named(renderer.Feed(text) + renderer.Finish());
}

TEST(MarkdownTest, HeadingsListsBoldAndCode) {
  EXPECT_EQ(Render("# Title\n"), "<b><u>Title<reset>\n");
  EXPECT_EQ(Render("## Part two\n"), "<b>Part two<reset>\n");
  EXPECT_EQ(Render("- one\n  * two\n"),
            "\xe2\x80\xa2 one\n  \xe2\x80\xa2 two\n");
  EXPECT_EQ(Render("1. first\n"), "<b>1.</b> first\n");
  EXPECT_EQ(Render("a **bold** and `x()` here\n"),
            "a <b>bold</b> and <code>x()</code> here\n");
  EXPECT_EQ(Render("> quoted\n"), "<dim>| <reset>quoted\n");
  EXPECT_EQ(Render("---\n"), "<dim>----------------<reset>\n");
}

TEST(MarkdownTest, CodeBlocksAreNotFormatted) {
  EXPECT_EQ(Render("```sh\n# not a heading **x**\n```\nafter **b**\n"),
            "<dim>```sh<reset>\n<code># not a heading **x**<reset>\n"
            "<dim>```<reset>\nafter <b>b</b>\n");
}

TEST(MarkdownTest, WhatIsNotMarkdownPassesAsWritten) {
  // Negative controls: markers that do not open or close a construct.
  EXPECT_EQ(Render("2 * 3 ** 4 and a**\n"), "2 * 3 ** 4 and a**\n");
  EXPECT_EQ(Render("#hashtag\n"), "#hashtag\n");
  EXPECT_EQ(Render("-not a list\n"), "-not a list\n");
  EXPECT_EQ(Render("a ` lone tick\n"), "a ` lone tick\n");
  EXPECT_EQ(Render("plain\n"), "plain\n");
}

TEST(MarkdownTest, TextStreamsAndOnlyWhatMayBeMarkupWaits) {
  MarkdownRenderer renderer;
  // Plain text is shown as it comes (a streamed answer is not held back).
  EXPECT_EQ(renderer.Feed("Once upon a time"), "Once upon a time");
  EXPECT_EQ(renderer.Feed(" there\n"), " there\n");
  EXPECT_EQ(Named(renderer.Feed("# Ti")), "<b><u>Ti");
  EXPECT_EQ(Named(renderer.Feed("tle\nsecond **li")), "tle<reset>\nsecond ");
  EXPECT_EQ(Named(renderer.Feed("ne**")), "<b>line</b>");
  EXPECT_EQ(Named(renderer.Finish()), "");
  // A line start that may be a list waits for the character that decides.
  EXPECT_EQ(renderer.Feed("-"), "");
  EXPECT_EQ(renderer.Feed(" item\n"), "\xe2\x80\xa2 item\n");
  // An opening backtick waits for its close, or for the line's end.
  EXPECT_EQ(renderer.Feed("run `mak"), "run ");
  EXPECT_EQ(Named(renderer.Feed("e` now\n")), "<code>make</code> now\n");
  EXPECT_EQ(renderer.Feed("a `lone\n"), "a `lone\n");
  // An unclosed code block ends with the answer.
  EXPECT_EQ(Named(renderer.Feed("```\n")), "<dim>```<reset>\n");
  renderer.Finish();
  EXPECT_EQ(Named(renderer.Feed("**b**\n")), "<b>b</b>\n");
}

}  // namespace
}  // namespace terminal
}  // namespace garuda
