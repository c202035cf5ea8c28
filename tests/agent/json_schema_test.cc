#include "tests/agent/json_schema.h"

#include <string>

#include "gtest/gtest.h"
#include "lib/provider/json.h"

namespace garuda {
namespace agent {
namespace {

google::protobuf::Value Parse(const std::string& text) {
  absl::StatusOr<google::protobuf::Value> value =
      provider::ParseJson(text, "test JSON");
  EXPECT_TRUE(value.ok()) << value.status();
  return value.ok() ? *value : google::protobuf::Value();
}

const char kSchema[] = R"({
  "oneOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}],
  "$defs": {
    "n": {"type": "integer", "minimum": 0},
    "a": {"type": "object", "required": ["type", "n"],
          "additionalProperties": false,
          "properties": {"type": {"const": "a"}, "n": {"$ref": "#/$defs/n"},
                         "list": {"type": "array", "items": {"type": "string"}}}},
    "b": {"type": "object", "required": ["type"],
          "properties": {"type": {"const": "b"},
                         "mode": {"enum": ["x", "y"]}}}
  }
})";

std::string Error(const std::string& value) {
  absl::Status status = ValidateJson(Parse(value), Parse(kSchema));
  return status.ok() ? "" : std::string(status.message());
}

TEST(JsonSchemaTest, ValidValuesPass) {
  EXPECT_EQ(Error(R"({"type": "a", "n": 3, "list": ["p"]})"), "");
  EXPECT_EQ(Error(R"({"type": "b", "mode": "y", "other": 1})"), "");
}

TEST(JsonSchemaTest, EachKindOfMistakeIsNamedWithItsPlace) {
  EXPECT_NE(Error(R"({"type": "a", "n": "3"})").find("$.n is string"),
            std::string::npos);
  EXPECT_NE(Error(R"({"type": "a", "n": 1.5})").find("not integer"),
            std::string::npos);
  EXPECT_NE(Error(R"({"type": "a", "n": -1})").find("below the minimum"),
            std::string::npos);
  EXPECT_NE(Error(R"({"type": "a"})").find("has no \"n\""), std::string::npos);
  EXPECT_NE(Error(R"({"type": "a", "n": 1, "extra": 2})")
                .find("$.extra no value is allowed"),
            std::string::npos);
  EXPECT_NE(Error(R"({"type": "a", "n": 1, "list": [3]})").find("$.list[0]"),
            std::string::npos);
  EXPECT_NE(Error(R"({"type": "b", "mode": "z"})").find("not one of"),
            std::string::npos);
  EXPECT_NE(Error(R"({"type": "c"})").find("matches none"), std::string::npos);
}

TEST(JsonSchemaTest, AKeywordItCannotCheckIsAnError) {
  absl::Status status = ValidateJson(
      Parse(R"("x")"), Parse(R"({"type": "string", "pattern": "^y$"})"));
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_NE(status.message().find("\"pattern\""), std::string::npos);
  EXPECT_FALSE(ValidateJsonAgainst(Parse("1"), Parse(kSchema), "none").ok());
  EXPECT_TRUE(ValidateJsonAgainst(Parse("1"), Parse(kSchema), "n").ok());
}

}  // namespace
}  // namespace agent
}  // namespace garuda
