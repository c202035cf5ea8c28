#include "lib/base/json_message.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "proto/settings.pb.h"

namespace garuda {
namespace {

TEST(JsonMessageTest, ParsesCamelCaseFields) {
  Settings settings;
  ASSERT_TRUE(ParseJsonMessage(
                  R"({"profile":"strict","requireSandbox":true,
                      "audit":{"checkpoint":true}})",
                  "policy.json", &settings)
                  .ok());
  EXPECT_EQ(settings.profile(), "strict");
  EXPECT_TRUE(settings.require_sandbox());
  EXPECT_TRUE(settings.audit().checkpoint());
}

TEST(JsonMessageTest, UnknownFieldNamesFileAndField) {
  Settings settings;
  absl::Status status =
      ParseJsonMessage(R"({"audit":{"chekpoint":true}})", "/etc/x.json",
                       &settings);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("/etc/x.json"), absl::string_view::npos);
  EXPECT_NE(status.message().find("chekpoint"), absl::string_view::npos)
      << status;
}

TEST(JsonMessageTest, WrongTypeIsAnError) {
  Settings settings;
  absl::Status status = ParseJsonMessage(R"({"requireSandbox":"yes"})",
                                         "settings.json", &settings);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("settings.json"), absl::string_view::npos);
  EXPECT_NE(status.message().find("requireSandbox"), absl::string_view::npos)
      << status;
}

}  // namespace
}  // namespace garuda

namespace garuda {
namespace {

TEST(JsonMessageTest, NestedWrongTypeNamesThePath) {
  Settings settings;
  absl::Status status = ParseJsonMessage(
      R"({"sandbox":{"writePaths":["a", 3]}})", "p.json", &settings);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("sandbox.writePaths[1]"),
            absl::string_view::npos)
      << status;
}

TEST(JsonMessageTest, NotJsonIsAnError) {
  Settings settings;
  EXPECT_FALSE(ParseJsonMessage("{profile:", "p.json", &settings).ok());
  EXPECT_FALSE(ParseJsonMessage("[1]", "p.json", &settings).ok());
}

}  // namespace
}  // namespace garuda

namespace garuda {
namespace {

TEST(JsonMessageTest, SixtyFourBitIntegersMayBeStrings) {
  Settings settings;
  ASSERT_TRUE(ParseJsonMessage(R"({"budget":{"tokenBudget":"150000"}})",
                               "s.json", &settings)
                  .ok());
  EXPECT_EQ(settings.budget().token_budget(), 150000u);
  EXPECT_FALSE(ParseJsonMessage(R"({"budget":{"tokenBudget":"lots"}})",
                                "s.json", &settings)
                   .ok());
  EXPECT_FALSE(ParseJsonMessage(R"({"audit":{"checkpointEvery":"10"}})",
                                "s.json", &settings)
                   .ok());
}

TEST(JsonMessageTest, ErrorsShowTheFileBytesVisibly) {
  Settings settings;
  // A key that would set the terminal's title and clear the screen, written
  // with JSON escapes (raw control bytes are refused by the syntax check).
  absl::Status status = ParseJsonMessage(
      "{\"\\u001b]0;owned\\u0007\\u001b[2J\":1}", "settings.json",
      &settings);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().find('\x1b'), absl::string_view::npos) << status;
  EXPECT_EQ(status.message().find('\x07'), absl::string_view::npos) << status;
  EXPECT_NE(status.message().find("\\e]0;owned"), absl::string_view::npos)
      << status;
  // A raw byte is named, not quoted; the message's own "\n" hint stays as
  // written (not doubled).
  status = ParseJsonMessage("{\"a\x1b[2J\":1}", "settings.json", &settings);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().find('\x1b'), absl::string_view::npos) << status;
  EXPECT_EQ(status.message().find("\\\\"), absl::string_view::npos) << status;
}

}  // namespace
}  // namespace garuda

namespace garuda {
namespace {

std::string ParseError(absl::string_view json) {
  Settings settings;
  absl::Status status = ParseJsonMessage(json, "settings.json", &settings);
  return status.ok() ? "ok" : std::string(status.message());
}

TEST(JsonMessageTest, SyntaxErrorsNameFileLineAndColumn) {
  EXPECT_EQ(ParseError("{\n  \"profile\": \"strict\",\n}"),
            "settings.json:3:1: expected a field name after ',', found '}' (a "
            "trailing comma is not allowed)");
  EXPECT_EQ(ParseError("[]"),
            "settings.json:1:1: expected a JSON object ('{' ... '}'), found "
            "'['");
}

TEST(JsonMessageTest, WrongTypesNameTheFieldAsTheFileSpellsIt) {
  EXPECT_EQ(ParseError(R"({"budget": {"tokenBudget": "lots"}})"),
            "settings.json: field \"budget.tokenBudget\" must be a whole "
            "number from 0 to 18446744073709551615, not a string that is not "
            "a whole number");
  EXPECT_EQ(ParseError(R"({"budget": {"token_budget": -1}})"),
            "settings.json: field \"budget.token_budget\" must be a whole "
            "number from 0 to 18446744073709551615, not a number out of that "
            "range");
  EXPECT_EQ(ParseError(R"({"sandbox": {"limits": {"processes": 4294967296}}})"),
            "settings.json: field \"sandbox.limits.processes\" must be a whole "
            "number from 0 to 4294967295, not a number out of that range");
  EXPECT_EQ(ParseError(R"({"sandbox": {"limits": {"cpuSeconds": 1.5}}})"),
            "settings.json: field \"sandbox.limits.cpuSeconds\" must be a "
            "whole number from 0 to 4294967295, not a fraction");
  EXPECT_EQ(ParseError(R"({"budget": {"tokenBudget": "18446744073709551616"}})"),
            "settings.json: field \"budget.tokenBudget\" must be a whole "
            "number from 0 to 18446744073709551615, not a number out of that "
            "range");
  for (const std::string& message :
       {ParseError(R"({"budget": {"tokenBudget": "lots"}})"),
        ParseError(R"({"sandbox": {"limits": {"memoryMb": "1e9"}}})")}) {
    EXPECT_EQ(message.find("TYPE_"), std::string::npos) << message;
    EXPECT_EQ(message.find("token_budget"), std::string::npos) << message;
  }
}

TEST(JsonMessageTest, SchemaKeyIsAcceptedAtTheTop) {
  Settings settings;
  ASSERT_TRUE(ParseJsonMessage(
                  R"({"$schema": "https://example.invalid/settings.schema.json",
                      "profile": "strict"})",
                  "s.json", &settings)
                  .ok());
  EXPECT_EQ(settings.profile(), "strict");
  EXPECT_EQ(ParseError(R"({"$schema": 3})"),
            "settings.json: field \"$schema\" must be a string, not a number");
  EXPECT_EQ(ParseError(R"({"audit": {"$schema": "x"}})"),
            "settings.json: unknown field \"audit.$schema\"");
}

TEST(JsonMessageTest, AnEmptyFileIsAnEmptyObject) {
  std::string path = absl::StrCat(testing::TempDir(), "/empty_settings.json");
  for (const char* text : {"", "  \n\t\n"}) {
    FILE* file = std::fopen(path.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs(text, file);
    std::fclose(file);
    Settings settings;
    settings.set_profile("left over");
    EXPECT_TRUE(ReadJsonMessageFile(path, &settings).ok());
    EXPECT_EQ(settings.profile(), "");
  }
  // A string that is empty is still not a JSON object.
  EXPECT_NE(ParseError(""), "ok");
}

}  // namespace
}  // namespace garuda
