// The parts of lib/agent/children.h that need no session: the task tool's
// arguments, the answer's cap and the settings' defaults. The sessions
// with children run in tests/agent/children_test.cc.
#include "lib/agent/children.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/budget/meter.h"

namespace garuda {
namespace agent {
namespace {

TEST(TaskArgumentsTest, DescriptionAndPromptAreRequiredStrings) {
  auto ok = ParseTaskArguments(R"({"description":"look","prompt":"find x"})");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->description, "look");
  EXPECT_EQ(ok->prompt, "find x");
  for (const char* bad :
       {R"({"description":"look"})", R"({"description":"","prompt":"p"})",
        R"({"description":1,"prompt":"p"})",
        R"({"description":"d","prompt":"p","model":"other"})", "[]",
        "not json"}) {
    auto parsed = ParseTaskArguments(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    EXPECT_TRUE(absl::StrContains(parsed.status().message(), "task")) << bad;
  }
}

TEST(CapChildAnswerTest, ShortAnswersPassLongOnesAreCutInsideTheCap) {
  bool cut = true;
  EXPECT_EQ(CapChildAnswer("short", &cut), "short");
  EXPECT_FALSE(cut);
  const std::string exact(budget::kSubagentResultCapChars, 'a');
  EXPECT_EQ(CapChildAnswer(exact, &cut), exact);  // at the cap: whole
  EXPECT_FALSE(cut);
  const std::string capped = CapChildAnswer(exact + "b", &cut);
  EXPECT_TRUE(cut);
  EXPECT_LE(capped.size(),
            static_cast<size_t>(budget::kSubagentResultCapChars));
  EXPECT_TRUE(absl::StrContains(capped, "cut at 20000 characters"));
}

TEST(CapChildAnswerTest, NeverCutsAUtf8SequenceInTwo) {
  // 3-byte characters across the cut, at every offset.
  for (int shift = 0; shift < 3; ++shift) {
    std::string answer(shift, 'a');
    while (answer.size() < 30000) answer += "\xE2\x82\xAC";  // the euro sign
    bool cut = false;
    const std::string capped = CapChildAnswer(answer, &cut);
    ASSERT_TRUE(cut);
    const size_t note = capped.find("\n[Garuda:");
    ASSERT_NE(note, std::string::npos);
    const std::string kept = capped.substr(shift, note - shift);
    EXPECT_EQ(kept.size() % 3, 0u) << "shift " << shift;
  }
}

// Carried as JSON carries it: a quote or a backslash takes two characters,
// a control character six.
int64_t JsonCarried(absl::string_view text) {
  int64_t size = 0;
  for (char c : text) {
    size += (c == '"' || c == '\\')                ? 2
            : static_cast<unsigned char>(c) < 0x20 ? 6
                                                   : 1;
  }
  return size;
}

TEST(CutChildAnswerTest, TheCutIsMeasuredAsTheAnswerIsCarried) {
  bool cut = true;
  const std::string quotes(1500, '"');  // 3000 characters carried
  EXPECT_EQ(CutChildAnswer(quotes, 3000, JsonCarried, &cut), quotes);
  EXPECT_FALSE(cut);
  const std::string longer = quotes + "\"";
  const std::string kept = CutChildAnswer(longer, 3000, JsonCarried, &cut);
  EXPECT_TRUE(cut);
  EXPECT_LE(JsonCarried(kept), 3000);
  EXPECT_GE(JsonCarried(kept), 2998);  // as much as fits
  EXPECT_TRUE(absl::StrContains(kept, "cut at 3000 characters; 1501 were"));
  // The control: cut by its bytes, the same answer carries far more.
  const std::string by_bytes = CutChildAnswer(
      longer, 3000,
      [](absl::string_view t) { return static_cast<int64_t>(t.size()); }, &cut);
  EXPECT_GT(JsonCarried(by_bytes), 3000);
}

TEST(CutChildAnswerTest, NeverCutsAUtf8SequenceInTwoWhenMeasured) {
  for (int shift = 0; shift < 3; ++shift) {
    std::string answer(shift, 'a');
    while (answer.size() < 9000) answer += "\xE2\x82\xAC";
    bool cut = false;
    const std::string kept = CutChildAnswer(answer, 4000, JsonCarried, &cut);
    ASSERT_TRUE(cut);
    const size_t note = kept.find("\n[Garuda:");
    ASSERT_NE(note, std::string::npos);
    EXPECT_EQ((note - shift) % 3, 0u) << "shift " << shift;
    EXPECT_LE(JsonCarried(kept), 4000);
  }
}

TEST(ChildSettingsTest, DefaultsAndWhatTheSettingsSay) {
  ChildSettings defaults = ChildSettingsFrom(AgentSettings(), ModelSettings());
  EXPECT_EQ(defaults.max_depth, 2);
  EXPECT_EQ(defaults.max_parallel, 4);
  EXPECT_EQ(defaults.child_token_budget, 150000);
  EXPECT_EQ(defaults.context_window, 200000);
  EXPECT_TRUE(defaults.keep_floor);
  AgentSettings agents;
  agents.set_max_depth(1);
  agents.set_max_parallel(8);
  agents.set_child_token_budget(5000);
  ModelSettings model;
  model.set_context_window(32000);
  ChildSettings set = ChildSettingsFrom(agents, model);
  EXPECT_EQ(set.max_depth, 1);
  EXPECT_EQ(set.max_parallel, 8);
  EXPECT_EQ(set.child_token_budget, 5000);
  EXPECT_EQ(set.context_window, 32000);
}

TEST(TaskToolDefinitionTest, NamedTaskWithBothArguments) {
  provider::ToolDefinition tool = TaskToolDefinition();
  EXPECT_EQ(tool.name(), "task");
  EXPECT_TRUE(absl::StrContains(tool.parameters_json(),
                                R"("required":["description","prompt"])"));
}

}  // namespace
}  // namespace agent
}  // namespace garuda
