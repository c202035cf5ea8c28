#include "lib/provider/json.h"

#include "gtest/gtest.h"

namespace garuda {
namespace provider {
namespace {

TEST(JsonTest, BuildsAndReadsBack) {
  Value object = JsonObject();
  Set(&object, "name", JsonString("bash"));
  Set(&object, "max_tokens", JsonNumber(4096));
  Value* list = Set(&object, "list", JsonList());
  Append(list, JsonBool(true));
  Append(list, JsonNull());
  const std::string text = ToJson(object);
  EXPECT_NE(text.find("\"max_tokens\":4096"), std::string::npos) << text;
  auto parsed = ParseJson(text, "test");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(StringMember(*parsed, "name"), "bash");
  EXPECT_EQ(TokenCountMember(*parsed, "max_tokens"), 4096);
  EXPECT_EQ(ListMember(*parsed, "list")->values_size(), 2);
  EXPECT_EQ(ObjectMember(*parsed, "name"), nullptr);
  EXPECT_EQ(StringMember(*parsed, "absent"), "");
}

TEST(JsonTest, ParseErrorNamesWhatWasRead) {
  auto parsed = ParseJson("{not json", "a stream chunk");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("a stream chunk"),
            std::string::npos);
}

TEST(JsonTest, OnlyWholeNonNegativeNumbersAreTokenCounts) {
  auto parsed = ParseJson(
      R"({"a": 10, "b": -1, "c": 1.5, "d": "10", "e": null, "f": 1e300})",
      "usage");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(TokenCountMember(*parsed, "a"), 10);
  EXPECT_EQ(TokenCountMember(*parsed, "b"), std::nullopt);
  EXPECT_EQ(TokenCountMember(*parsed, "c"), std::nullopt);
  EXPECT_EQ(TokenCountMember(*parsed, "d"), std::nullopt);
  EXPECT_EQ(TokenCountMember(*parsed, "e"), std::nullopt);
  EXPECT_EQ(TokenCountMember(*parsed, "f"), std::nullopt);
  EXPECT_EQ(TokenCountMember(*parsed, "absent"), std::nullopt);
}

TEST(JsonTest, InvalidUtf8IsReplacedSoTheBodyCanBeWritten) {
  EXPECT_EQ(ValidUtf8("ok \xC3\xA9"), "ok \xC3\xA9");
  EXPECT_EQ(ValidUtf8("a\xFF"
                      "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(ValidUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"),
            "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");             // a surrogate
  EXPECT_EQ(ValidUtf8("\xE2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // cut short
  // A command's raw output still makes a body that parses.
  Value object = JsonObject();
  Set(&object, "content", JsonString("bytes \x80\x81 end"));
  auto parsed = ParseJson(ToJson(object), "body");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(StringMember(*parsed, "content"),
            "bytes \xEF\xBF\xBD\xEF\xBF\xBD end");
}

}  // namespace
}  // namespace provider
}  // namespace garuda
