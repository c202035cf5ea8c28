#include "lib/base/json_message.h"

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
  // A key that would set the terminal's title and clear the screen.
  absl::Status status = ParseJsonMessage(
      "{\"\x1b]0;owned\x07\x1b[2J\":1}", "settings.json", &settings);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().find('\x1b'), absl::string_view::npos) << status;
  EXPECT_EQ(status.message().find('\x07'), absl::string_view::npos) << status;
  EXPECT_NE(status.message().find("\\e]0;owned"), absl::string_view::npos)
      << status;
  // A syntax error quotes the text near it.
  status = ParseJsonMessage("{\"a\" \x1b[2J", "settings.json", &settings);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message().find('\x1b'), absl::string_view::npos) << status;
}

}  // namespace
}  // namespace garuda
