// A tool call's permission decision: a deny rule refuses without a
// question, nobody to ask is a refusal, a call a helper acts on is only
// proposed on a terminal (the helper asks) and asked and relayed in an
// editor's session, and "yes for this session" is remembered.
#include "lib/agent/call_decision.h"

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace garuda {
namespace agent {
namespace {

class Person : public Interaction {
 public:
  bool CanAsk() const override { return can_ask; }
  bool RelaysAnswers() const override { return relays; }
  void ShowText(absl::string_view) override {}
  void ShowRetry(absl::string_view) override {}
  void ShowToolCall(const ToolCallView&) override {}
  void ShowToolOutcome(const ToolOutcomeView&) override {}
  void ShowNotice(absl::string_view) override {}
  PermissionAnswer AskPermission(const PermissionQuestion& question) override {
    ++asked;
    last_question = question;
    return answer;
  }

  bool can_ask = true;
  bool relays = false;
  PermissionAnswer answer = PermissionAnswer::kYes;
  int asked = 0;
  PermissionQuestion last_question;
};

struct Fixture {
  Fixture() {
    context.permissions = &permissions;
    context.interaction = &person;
  }
  Decided Decide(const std::string& command, CallQuestion question) {
    PermissionRequest request{"bash", command};
    return CallDecision(context, "bash", request).Decide(question);
  }
  Permissions permissions;
  Person person;
  ToolContext context;
};

CallQuestion Asking(const char* helper = nullptr) {
  CallQuestion question;
  question.ask_by_default = true;
  question.summary = "Run on the host: make";
  question.detail = "no sandbox";
  question.helper = helper;
  return question;
}

TEST(CallDecisionTest, ADenyRuleRefusesWithoutAQuestion) {
  Fixture f;
  ASSERT_TRUE(f.permissions.AddRule(Verdict::kDeny, "bash(make)", "t").ok());
  Decided decided = f.Decide("make", Asking());
  EXPECT_FALSE(decided.allowed());
  EXPECT_EQ(decided.verdict, "deny");
  EXPECT_TRUE(absl::StartsWith(decided.for_model, "Denied: denied by"))
      << decided.for_model;
  EXPECT_EQ(f.person.asked, 0);
  // Control: without the rule the same call is asked.
  Fixture control;
  EXPECT_TRUE(control.Decide("make", Asking()).allowed());
  EXPECT_EQ(control.person.asked, 1);
}

TEST(CallDecisionTest, NobodyToAskIsARefusal) {
  Fixture f;
  f.person.can_ask = false;
  Decided decided = f.Decide("make", Asking());
  EXPECT_EQ(decided.verdict, "deny");
  EXPECT_EQ(decided.text, "no person to ask: no");
  EXPECT_EQ(f.person.asked, 0);
}

TEST(CallDecisionTest, AHelpersCallIsProposedOnATerminalAndRelayedInAnEditor) {
  Fixture terminal;
  Decided proposed = terminal.Decide("make", Asking("garuda-stager"));
  EXPECT_EQ(proposed.verdict, "propose");
  EXPECT_EQ(proposed.text, "proposed: garuda-stager asks the person");
  EXPECT_EQ(terminal.person.asked, 0);
  EXPECT_FALSE(proposed.relayed.has_value());

  Fixture editor;
  editor.person.relays = true;
  editor.person.answer = PermissionAnswer::kNo;
  Decided relayed = editor.Decide("make", Asking("garuda-stager"));
  EXPECT_EQ(editor.person.asked, 1);
  EXPECT_EQ(relayed.verdict, "deny");
  EXPECT_EQ(relayed.text, "asked: no");
  ASSERT_TRUE(relayed.relayed.has_value());
  EXPECT_FALSE(relayed.relayed->yes());
  EXPECT_EQ(relayed.relayed->from(), "acp");
}

TEST(CallDecisionTest, AYesForTheSessionIsRememberedAndNotAskedAgain) {
  Fixture f;
  f.person.answer = PermissionAnswer::kYesForSession;
  Decided first = f.Decide("make", Asking());
  EXPECT_EQ(first.text, "asked: yes, and for this session: bash(make)");
  EXPECT_EQ(f.person.last_question.detail, "no sandbox");
  Decided second = f.Decide("make", Asking());
  EXPECT_EQ(second.verdict, "allow");
  EXPECT_TRUE(absl::StartsWith(second.text, "allowed by")) << second.text;
  EXPECT_EQ(f.person.asked, 1);
}

}  // namespace
}  // namespace agent
}  // namespace garuda
