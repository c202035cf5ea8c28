#include "lib/tools/definitions.h"

#include "gtest/gtest.h"
#include "lib/provider/json.h"

namespace garuda {
namespace {

using google::protobuf::Value;

std::string Error(absl::string_view tool, absl::string_view json,
                  ToolProfile profile = ToolProfile::kDefault) {
  absl::StatusOr<Value> input = CheckToolInput(tool, json, profile);
  EXPECT_FALSE(input.ok()) << json;
  return input.ok() ? "" : std::string(input.status().message());
}

const provider::ToolDefinition* Find(
    const std::vector<provider::ToolDefinition>& tools,
    absl::string_view name) {
  for (const auto& tool : tools) {
    if (tool.name() == name) return &tool;
  }
  return nullptr;
}

TEST(ToolDefinitionsTest, EveryToolHasAStrictObjectSchema) {
  for (ToolProfile profile : {ToolProfile::kDefault, ToolProfile::kStrict}) {
    std::vector<provider::ToolDefinition> tools = ToolDefinitions(profile);
    ASSERT_EQ(tools.size(), 6u);
    for (const auto& tool : tools) {
      absl::StatusOr<Value> schema =
          provider::ParseJson(tool.parameters_json(), "schema");
      ASSERT_TRUE(schema.ok()) << tool.name();
      EXPECT_EQ(provider::StringMember(*schema, "type"), "object");
      const Value* extra = provider::Member(*schema, "additionalProperties");
      ASSERT_NE(extra, nullptr) << tool.name();
      EXPECT_FALSE(extra->bool_value()) << tool.name();
      EXPECT_FALSE(tool.description().empty());
    }
  }
}

TEST(ToolDefinitionsTest, StrictBashHasNoOutsideSandbox) {
  const auto strict = ToolDefinitions(ToolProfile::kStrict);
  const auto normal = ToolDefinitions(ToolProfile::kDefault);
  EXPECT_EQ(Find(strict, "bash")->parameters_json().find("outside_sandbox"),
            std::string::npos);
  // Negative control: the default profile offers it.
  EXPECT_NE(Find(normal, "bash")->parameters_json().find("outside_sandbox"),
            std::string::npos);
}

TEST(CheckToolInputTest, StrictRefusesOutsideSandbox) {
  const char* call = R"({"command": "ls", "outside_sandbox": true})";
  std::string message = Error("bash", call, ToolProfile::kStrict);
  EXPECT_NE(message.find("unknown field \"outside_sandbox\""),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("strict profile"), std::string::npos) << message;
  // Control: the default profile accepts the same call.
  absl::StatusOr<BashInput> input = ParseBashInput(call, ToolProfile::kDefault);
  ASSERT_TRUE(input.ok()) << input.status();
  EXPECT_TRUE(input->outside_sandbox);
  EXPECT_EQ(input->command, "ls");
  // And strict accepts it without the field.
  EXPECT_TRUE(ParseBashInput(R"({"command": "ls", "timeout": 30})",
                             ToolProfile::kStrict)
                  .ok());
}

TEST(CheckToolInputTest, MessagesForTheModel) {
  EXPECT_EQ(Error("read_file", R"({"path": "a", "colour": 1})"),
            "read_file: unknown field \"colour\" (the fields are limit, "
            "offset, path)");
  EXPECT_EQ(Error("edit_file", R"({"path": "a", "old_string": "x"})"),
            "edit_file: missing required field \"new_string\"");
  EXPECT_EQ(Error("read_file", R"({"path": 7})"),
            "read_file: field \"path\" must be a string, not a number");
  EXPECT_EQ(Error("read_file", R"({"path": "a", "offset": 1.5})"),
            "read_file: field \"offset\" must be a whole number, not a number");
  EXPECT_EQ(Error("read_file", R"({"path": "a", "limit": 0})"),
            "read_file: field \"limit\" must be at least 1, not 0");
  EXPECT_EQ(Error("edit_file",
                  R"({"path": "a", "old_string": "x", "new_string": "y",
                      "replace_all": "yes"})"),
            "edit_file: field \"replace_all\" must be true or false, not a "
            "string");
  EXPECT_EQ(Error("bash", "[1]"),
            "bash: the arguments must be a JSON object, not a list");
  EXPECT_NE(Error("bash", "{\"command\": ").find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(Error("rm", "{}").find("no tool named \"rm\""), std::string::npos);
}

TEST(CheckToolInputTest, OptionalFieldsTakeDefaults) {
  absl::StatusOr<ReadFileInput> read = ParseReadFileInput(R"({"path": "a"})");
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->offset, 1);
  EXPECT_EQ(read->limit, 2000);
  absl::StatusOr<ListFilesInput> list = ParseListFilesInput("");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->path, "");
  absl::StatusOr<EditFileInput> edit = ParseEditFileInput(
      R"({"path": "a", "old_string": "x", "new_string": "y"})");
  ASSERT_TRUE(edit.ok());
  EXPECT_FALSE(edit->replace_all);
}

}  // namespace
}  // namespace garuda
