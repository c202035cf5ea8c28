#include "lib/base/json_syntax.h"

#include <string>

#include "gtest/gtest.h"

namespace garuda {
namespace {

std::string ErrorOf(absl::string_view text) {
  absl::Status status = CheckJsonSyntax(text);
  return status.ok() ? "ok" : std::string(status.message());
}

TEST(JsonSyntaxTest, AcceptsJson) {
  for (const char* text :
       {"{}", "[]", " {\"a\": [1, -2.5e3, true, false, null, \"x\\n\\u00e9\"]} ",
        "\"caf\xc3\xa9\"", "0", "-0.1", "{\"a\":{\"b\":{}}}", "[[],[[]]]"}) {
    EXPECT_EQ(ErrorOf(text), "ok") << text;
  }
}

TEST(JsonSyntaxTest, SaysLineColumnAndWhatWasExpected) {
  EXPECT_EQ(ErrorOf("{\n  \"a\": 1\n  \"b\": 2\n}"),
            "3:3: expected ',' or '}' after the value of \"a\", found '\"'");
  EXPECT_EQ(ErrorOf("{\"a\": }"),
            "1:7: expected a value (an object, a list, a string in double "
            "quotes, a number, true, false or null), found '}'");
  EXPECT_EQ(ErrorOf("{\"a\" 1}"),
            "1:6: expected ':' after the field name \"a\", found '1'");
  EXPECT_EQ(ErrorOf("{a: 1}"),
            "1:2: expected a field name in double quotes, found 'a'");
  EXPECT_EQ(ErrorOf(""), "1:1: expected a JSON value, found the end of the file");
  EXPECT_EQ(ErrorOf("{} x"),
            "1:4: expected the end of the file after the value, found 'x'");
  EXPECT_EQ(ErrorOf("{\"a\": \"b"), "1:9: a string is not closed (a '\"' is missing)");
}

TEST(JsonSyntaxTest, ColumnsCountCharactersNotBytes) {
  EXPECT_EQ(ErrorOf("{\"\xc3\xa9\xc3\xa9\": x}"),
            "1:8: expected a value (an object, a list, a string in double "
            "quotes, a number, true, false or null), found 'x'");
}

TEST(JsonSyntaxTest, TrailingCommasAreErrorsInObjectsAndLists) {
  EXPECT_EQ(ErrorOf("{\"a\": 1,}"),
            "1:9: expected a field name after ',', found '}' (a trailing "
            "comma is not allowed)");
  EXPECT_EQ(ErrorOf("{\"a\": [1, 2,]}"),
            "1:13: expected a value after ',', found ']' (a trailing comma is "
            "not allowed)");
}

TEST(JsonSyntaxTest, RefusesWhatJsonDoes) {
  for (const char* text :
       {"{'a': 1}", "[01]", "[1.]", "[.5]", "[1e]", "[+1]", "[tru]", "[nul]",
        "[\"a\\x\"]", "[\"\\u12\"]", "[\"a\tb\"]", "// c\n{}", "{} {}",
        "[\"\xff\"]", "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]", "[\"\xe2\x82\"]",
        "[NaN]", "[Infinity]"}) {
    EXPECT_NE(ErrorOf(text), "ok") << text;
  }
}

TEST(JsonSyntaxTest, AKeyTwiceIsAnError) {
  EXPECT_EQ(ErrorOf("{\"a\": 1, \"b\": {\"a\": 2}, \"a\": 3}"),
            "1:25: the field \"a\" appears twice in this object");
}

TEST(JsonSyntaxTest, ControlCharactersNeverReachTheMessage) {
  std::string error = ErrorOf("{\"a\": \x1b[2J}");
  EXPECT_EQ(error.find('\x1b'), std::string::npos) << error;
  EXPECT_NE(error.find("the byte 0x1b"), std::string::npos) << error;
}

TEST(JsonSyntaxTest, DeepNestingIsRefused) {
  std::string deep(kJsonMaxDepth, '[');
  deep += std::string(kJsonMaxDepth, ']');
  EXPECT_EQ(ErrorOf(deep), "ok");
  std::string deeper(kJsonMaxDepth + 1, '[');
  deeper += std::string(kJsonMaxDepth + 1, ']');
  EXPECT_NE(ErrorOf(deeper).find("nest deeper than"), std::string::npos);
}

TEST(JsonSyntaxTest, ObjectOnly) {
  EXPECT_TRUE(CheckJsonObjectSyntax(" {} ").ok());
  EXPECT_EQ(CheckJsonObjectSyntax("[1]").message(),
            "1:1: expected a JSON object ('{' ... '}'), found '['");
}

}  // namespace
}  // namespace garuda

namespace garuda {
namespace {

TEST(JsonQuotedTest, EscapesWhatJsonNeeds) {
  EXPECT_EQ(JsonQuoted("a\"b\\c\n\r\t\x01\x1b" "caf\xc3\xa9"),
            "\"a\\\"b\\\\c\\n\\r\\t\\u0001\\u001bcaf\xc3\xa9\"");
  EXPECT_TRUE(CheckJsonSyntax(JsonQuoted("any \x7f text \x02")).ok());
}

}  // namespace
}  // namespace garuda
