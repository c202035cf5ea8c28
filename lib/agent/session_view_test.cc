#include "lib/agent/session_view.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace garuda {
namespace agent {
namespace {

TEST(SessionViewTest, GroupedNumbers) {
  EXPECT_EQ(GroupedNumber(0), "0");
  EXPECT_EQ(GroupedNumber(999), "999");
  EXPECT_EQ(GroupedNumber(1234), "1 234");
  EXPECT_EQ(GroupedNumber(1234567), "1 234 567");
  EXPECT_EQ(GroupedNumber(-1000), "-1 000");
}

TEST(SessionViewTest, TheStatusLineSaysTokensBudgetAndMode) {
  UsageReport usage;
  usage.set_input_tokens(1000);
  usage.set_output_tokens(234);
  usage.set_charged_tokens(1300);
  budget::BudgetStatus status;
  status.set_limit(100000);
  status.set_left(98700);
  EXPECT_EQ(TurnStatusLine(usage, &status, "staged", "overlay"),
            "1 300 tokens this turn (1 000 in, 234 out) | 98 700 of 100 000 "
            "left | commands staged (overlay)");
  status.set_limit(0);
  status.set_spent(5);
  EXPECT_EQ(TurnStatusLine(usage, &status, "", ""),
            "1 300 tokens this turn (1 000 in, 234 out) | 5 spent, no budget "
            "limit | commands direct");
  usage.set_charged_tokens(0);
  EXPECT_EQ(TurnStatusLine(usage, nullptr, "direct", ""),
            "1 234 tokens this turn (1 000 in, 234 out) | budget: unknown | "
            "commands direct");
}

TEST(SessionViewTest, UndoNamesTheFilesAndWhatItDoesNotUndo) {
  applier::UndoOutcome undone;
  undone.set_kind(applier::ApplyOutcome::APPLIED);
  undone.set_line("Restored the project as it was before 1");
  undone.add_paths("a.txt");
  undone.add_paths("src/b.c");
  std::string staged = UndoText(undone, true);
  EXPECT_EQ(staged,
            "Restored the project as it was before 1\nRestored 2 files: "
            "a.txt, src/b.c");
  std::string direct = UndoText(undone, false);
  EXPECT_NE(direct.find("not what a command changed"), std::string::npos);
  // Negative control: a refused undo names no files as restored.
  undone.set_kind(applier::ApplyOutcome::CONFLICT);
  EXPECT_EQ(UndoText(undone, true).find("Restored 2"), std::string::npos);
}

provider::ChatMessage Message(const std::string& role,
                              const std::string& text) {
  provider::ChatMessage message;
  message.set_role(role);
  message.set_text(text);
  return message;
}

TEST(SessionViewTest, LastExchangesOfAResumedConversation) {
  std::vector<provider::ChatMessage> messages = {
      Message("user", "first question"),
      Message("assistant", "first answer"),
      Message("user", "second question"),
  };
  provider::ChatMessage call = Message("assistant", "Looking.");
  provider::ToolCall* tool = call.add_tool_calls();
  tool->set_name("grep");
  tool->set_arguments_json(R"({"pattern": "TODO"})");
  messages.push_back(call);
  provider::ChatMessage results;
  results.set_role("user");
  results.add_tool_results()->set_content("a.c:1: TODO");
  messages.push_back(results);
  // Negative control: results without a prompt are no exchange.
  EXPECT_EQ(LastExchanges(messages, 1).find("a.c:1"), std::string::npos);
  messages.push_back(Message("assistant", "1\n2\n3\n4\n5\n6\n7\n8"));
  // A note of Garuda's for the model is not a prompt of the person's.
  messages.push_back(Message("user", "[Garuda: the person undid a change]"));

  EXPECT_EQ(LastExchanges(messages, 1),
            "[1 earlier exchange not shown]\n"
            "> second question\n"
            "Looking.\n"
            "-> grep \"TODO\" in the project root\n"
            "1\n2\n3\n4\n5\n6\n[2 more lines]\n");
  std::string both = LastExchanges(messages, 5);
  EXPECT_EQ(both.find("earlier"), std::string::npos);
  EXPECT_NE(both.find("> first question\nfirst answer\n"), std::string::npos);
  EXPECT_EQ(LastExchanges({}, 3), "");
  // A prompt typed after a stopped turn shares the results' message.
  results.set_text("after the stop");
  messages.push_back(results);
  EXPECT_NE(LastExchanges(messages, 1).find("> after the stop"),
            std::string::npos);
}

TEST(SessionViewTest, BudgetShowsACappedCharge) {
  budget::BudgetStatus status;
  status.set_limit(1000);
  budget::AgentUsage* top = status.add_agents();
  top->set_spent(1010);
  EXPECT_FALSE(absl::StrContains(BudgetText(status, {}), "capped"));
  top->set_capped(1);
  top->set_capped_tokens(3900);
  EXPECT_TRUE(absl::StrContains(BudgetText(status, {}),
                                "capped: 1 usage reports above what one "
                                "request can cost were charged at that cap "
                                "(3900 reported tokens not charged)"))
      << BudgetText(status, {});
}

}  // namespace
}  // namespace agent
}  // namespace garuda
