#include "lib/tools/tool_table.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/changeset/test_tree.h"
#include "lib/permissions/rules.h"
#include "lib/tools/builtin_tools.h"

namespace garuda {
namespace {

// A row as an MCP server's tool would come: added at run time.
ToolRow LookupRow(std::function<bool()> offered = nullptr) {
  ToolRow row;
  row.spec.name = "lookup";
  row.spec.description = "Look a word up.";
  row.spec.schema = [](ToolProfile) {
    return std::string(R"({"type": "object", "properties": {
      "word": {"type": "string"}}, "required": ["word"],
      "additionalProperties": false})");
  };
  row.spec.kind = ToolKind::kSearch;
  row.spec.permission = {"lookup", TargetArgument::kNone};
  row.spec.summary =
      [](const google::protobuf::Value&) -> std::optional<std::string> {
    return "lookup of a word";
  };
  row.offered = std::move(offered);
  return row;
}

TEST(ToolTableTest, ARowAddedAtRunTimeIsOfferedCheckedAndShown) {
  ToolTable table;
  ASSERT_TRUE(table.Register(LookupRow()).ok());
  std::vector<provider::ToolDefinition> definitions =
      table.Definitions(ToolProfile::kDefault);
  ASSERT_EQ(definitions.size(), 1u);
  EXPECT_EQ(definitions[0].name(), "lookup");
  EXPECT_TRUE(
      table.CheckInput("lookup", R"({"word": "x"})", ToolProfile::kDefault)
          .ok());
  absl::StatusOr<google::protobuf::Value> missing =
      table.CheckInput("lookup", "{}", ToolProfile::kDefault);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "lookup: missing required field \"word\"");
  EXPECT_EQ(table.Summary("lookup", R"({"word": "x"})", ""),
            "lookup of a word");
  EXPECT_STREQ(table.KindName("lookup"), "search");
}

TEST(ToolTableTest, AnUnknownNameIsAnErrorNamingTheTools) {
  ToolTable table;
  ASSERT_TRUE(table.Register(LookupRow()).ok());
  absl::StatusOr<google::protobuf::Value> input =
      table.CheckInput("rm", "{}", ToolProfile::kDefault);
  ASSERT_FALSE(input.ok());
  EXPECT_TRUE(absl::IsNotFound(input.status()));
  EXPECT_TRUE(absl::StrContains(input.status().message(),
                                "no tool named \"rm\" (the tools are lookup)"))
      << input.status();
  EXPECT_EQ(table.Find("rm"), nullptr);
  EXPECT_STREQ(table.KindName("rm"), "other");
}

TEST(ToolTableTest, RegisterRefusesATakenNameAndABadSchema) {
  ToolTable table;
  ASSERT_TRUE(table.Register(LookupRow()).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(table.Register(LookupRow())));
  ToolRow bad = LookupRow();
  bad.spec.name = "bad";
  bad.spec.schema = [](ToolProfile) { return std::string("[1, 2]"); };
  EXPECT_TRUE(absl::IsInvalidArgument(table.Register(std::move(bad))));
  ToolRow nameless = LookupRow();
  nameless.spec.name = "";
  EXPECT_TRUE(absl::IsInvalidArgument(table.Register(std::move(nameless))));
}

TEST(ToolTableTest, ReplaceChangesTheRowOfThatNameOnly) {
  ToolTable table;
  ASSERT_TRUE(table.Register(LookupRow()).ok());
  ToolRow again = LookupRow();
  again.spec.description = "Look a word up, now in two languages.";
  ASSERT_TRUE(table.Replace(std::move(again)).ok());
  ASSERT_EQ(table.rows().size(), 1u);
  std::vector<provider::ToolDefinition> definitions =
      table.Definitions(ToolProfile::kDefault);
  ASSERT_EQ(definitions.size(), 1u);
  EXPECT_EQ(definitions[0].description(),
            "Look a word up, now in two languages.");

  ToolRow other = LookupRow();
  other.spec.name = "define";
  EXPECT_TRUE(absl::IsNotFound(table.Replace(std::move(other))));
  ToolRow bad = LookupRow();
  bad.spec.schema = [](ToolProfile) { return std::string("[]"); };
  EXPECT_TRUE(absl::IsInvalidArgument(table.Replace(std::move(bad))));
  EXPECT_EQ(table.Definitions(ToolProfile::kDefault)[0].description(),
            "Look a word up, now in two languages.");
}

TEST(ToolTableTest, ARowNotOfferedIsLeftOutOfTheRequest) {
  bool offered = false;
  ToolTable table;
  ASSERT_TRUE(table.Register(LookupRow([&offered] { return offered; })).ok());
  EXPECT_TRUE(table.Definitions(ToolProfile::kDefault).empty());
  offered = true;  // control
  EXPECT_EQ(table.Definitions(ToolProfile::kDefault).size(), 1u);
}

TEST(ToolTableTest, APermissionTargetOfNoArgumentNamesOnlyTheRule) {
  std::string root = testing::NewTempDir("table") + "/p";
  testing::Write(root + "/a", "x");
  absl::StatusOr<std::unique_ptr<Project>> project = Project::Open(root);
  ASSERT_TRUE(project.ok()) << project.status();
  ToolTable table;
  ASSERT_TRUE(table.Register(LookupRow()).ok());
  absl::StatusOr<PermissionRequest> request = table.PermissionRequestFor(
      **project, "lookup", R"({"word": "x"})", ToolProfile::kDefault);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->tool, "lookup");
  EXPECT_EQ(request->argument, "");
}

// Every built-in row is decided by a rule name the helpers know (or, for
// the code tools, by its own name, which no rule may use), and its kind
// agrees with what that rule matches.
TEST(BuiltinToolsTest, EveryRowHasAKnownPermissionTarget) {
  for (const ToolRow& row : BuiltinSpecs().rows()) {
    const PermissionTarget& target = row.spec.permission;
    const RuleName* rule = FindRuleName(target.rule);
    if (target.argument == TargetArgument::kReadPathOrSymbol) {
      EXPECT_EQ(rule, nullptr) << row.spec.name;
      EXPECT_EQ(target.rule, row.spec.name);
      continue;
    }
    ASSERT_NE(rule, nullptr) << row.spec.name;
    EXPECT_EQ(target.rule, row.spec.name);
    switch (rule->target) {
      case RuleTarget::kCommand:
        EXPECT_EQ(target.argument, TargetArgument::kCommand);
        EXPECT_EQ(row.spec.kind, ToolKind::kExecute);
        break;
      case RuleTarget::kReadPath:
        EXPECT_EQ(target.argument, TargetArgument::kReadPath);
        EXPECT_TRUE(row.spec.kind == ToolKind::kRead ||
                    row.spec.kind == ToolKind::kSearch);
        break;
      case RuleTarget::kWritePath:
        EXPECT_EQ(target.argument, TargetArgument::kWritePath);
        EXPECT_EQ(row.spec.kind, ToolKind::kEdit);
        break;
    }
  }
  // Every rule name is a built-in tool: a rule that names no tool would
  // decide nothing.
  for (const RuleName& rule : kRuleNames) {
    EXPECT_NE(BuiltinSpecs().Find(rule.name), nullptr) << rule.name;
  }
}

}  // namespace
}  // namespace garuda
