#include "lib/consent/consent.h"

#include <deque>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace garuda {
namespace {

// Answers as scripted and keeps the questions.
class ScriptedAsker : public Asker {
 public:
  std::deque<PermissionAnswer> permission_answers;
  std::deque<Answer> change_answers;
  std::vector<PermissionQuestion> asked;
  int change_questions = 0;

  PermissionAnswer AskPermission(const PermissionQuestion& question) override {
    asked.push_back(question);
    if (permission_answers.empty()) return PermissionAnswer::kNo;
    PermissionAnswer answer = permission_answers.front();
    permission_answers.pop_front();
    return answer;
  }
  Answer AskChangeSet(const ChangeSet&, const Rendered&) override {
    ++change_questions;
    if (change_answers.empty()) return Answer::kDiscard;
    Answer answer = change_answers.front();
    change_answers.pop_front();
    return answer;
  }
};

ChangeSet OneFile(const std::string& path) {
  ChangeSet change_set;
  Change change;
  change.entry.set_path(path);
  change.entry.set_kind(CHANGE_KIND_MODIFIED);
  change.entry.set_new_type(FILE_TYPE_REGULAR);
  change.content = "new\n";
  change.entry.set_size(4);
  change_set.changes.push_back(change);
  return change_set;
}

Permissions Rules(const std::vector<std::pair<Verdict, std::string>>& rules) {
  Permissions permissions;
  for (const auto& [verdict, text] : rules) {
    EXPECT_TRUE(permissions.AddRule(verdict, text, "test").ok()) << text;
  }
  return permissions;
}

struct Made {
  std::unique_ptr<Consent> consent;
  ScriptedAsker* asker;
};

Made Make(ConsentMode mode, Permissions permissions) {
  auto asker = std::make_unique<ScriptedAsker>();
  ScriptedAsker* raw = asker.get();
  return {
      std::make_unique<Consent>(mode, std::move(permissions), std::move(asker)),
      raw};
}

// garuda-stager keeps an on_host runner only where this is true.
TEST(ConsentTest, MayAgreeToHostCommandsOnlyWithSomeoneToAskOrABashRule) {
  EXPECT_FALSE(Make(ConsentMode::kRules, Rules({{Verdict::kAllow, "write_file"},
                                                {Verdict::kAsk, "bash"}}))
                   .consent->MayAgreeToHostCommands());
  // Controls: an allow rule for some commands, a person, a relayed answer.
  EXPECT_TRUE(
      Make(ConsentMode::kRules, Rules({{Verdict::kAllow, "bash(make *)"}}))
          .consent->MayAgreeToHostCommands());
  EXPECT_TRUE(Make(ConsentMode::kTerminal, Rules({}))
                  .consent->MayAgreeToHostCommands());
  EXPECT_TRUE(
      Make(ConsentMode::kRelayed, Rules({})).consent->MayAgreeToHostCommands());
}

TEST(ConsentTest, ParsesItsModes) {
  EXPECT_EQ(*ParseConsentMode("rules"), ConsentMode::kRules);
  EXPECT_EQ(*ParseConsentMode("terminal"), ConsentMode::kTerminal);
  EXPECT_EQ(*ParseConsentMode("relayed"), ConsentMode::kRelayed);
  absl::StatusOr<ConsentMode> bad = ParseConsentMode("yes");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "--consent"));
}

TEST(ConsentTest, RulesModeRefusesWhatNoRuleAllows) {
  Made made = Make(ConsentMode::kRules, Rules({}));
  ConsentDecision host = made.consent->ForHostCommand("make", "", std::nullopt);
  EXPECT_FALSE(host.yes);
  EXPECT_EQ(host.how, "no person to ask and no allow rule: no");
  EXPECT_FALSE(
      made.consent->ForEdit(OneFile("a.txt"), "edit_file", -1, std::nullopt)
          .yes);
  EXPECT_FALSE(
      made.consent->ForCommandChanges(OneFile("a.txt"), -1, std::nullopt).yes);
  // Nobody was asked: there is nobody.
  EXPECT_TRUE(made.asker->asked.empty());
  EXPECT_EQ(made.asker->change_questions, 0);
}

// The negative control of the one above: with the rules, the same calls
// are allowed, and the decision names the rule.
TEST(ConsentTest, RulesModeAllowsWhatARuleAllows) {
  Made made = Make(ConsentMode::kRules,
                   Rules({{Verdict::kAllow, "bash(make *)"},
                          {Verdict::kAllow, "edit_file(*.txt)"},
                          {Verdict::kAllow, "write_file(src/*)"}}));
  ConsentDecision host =
      made.consent->ForHostCommand("make test", "", std::nullopt);
  EXPECT_TRUE(host.yes);
  EXPECT_TRUE(absl::StrContains(host.how, "bash(make *)")) << host.how;
  EXPECT_TRUE(
      made.consent->ForEdit(OneFile("a.txt"), "edit_file", -1, std::nullopt)
          .yes);
  // A command's changes need write_file for every path.
  EXPECT_TRUE(
      made.consent->ForCommandChanges(OneFile("src/x"), -1, std::nullopt).yes);
  ChangeSet two = OneFile("src/x");
  two.changes.push_back(OneFile("other").changes[0]);
  ConsentDecision partly =
      made.consent->ForCommandChanges(two, -1, std::nullopt);
  EXPECT_FALSE(partly.yes);
  EXPECT_TRUE(absl::StrContains(partly.how, "other")) << partly.how;
}

TEST(ConsentTest, ADenyRuleWinsInEveryMode) {
  for (ConsentMode mode :
       {ConsentMode::kRules, ConsentMode::kTerminal, ConsentMode::kRelayed}) {
    Made made = Make(mode, Rules({{Verdict::kAllow, "bash"},
                                  {Verdict::kDeny, "bash(rm *)"}}));
    made.asker->permission_answers.push_back(PermissionAnswer::kYes);
    ConsentDecision decision = made.consent->ForHostCommand(
        "rm -rf x", "", RelayedConsent{"acp", true});
    EXPECT_FALSE(decision.yes) << ConsentModeName(mode);
    EXPECT_TRUE(absl::StartsWith(decision.how, "denied by")) << decision.how;
    EXPECT_TRUE(made.asker->asked.empty());
  }
}

TEST(ConsentTest, TerminalModeAsksAndRemembersASessionAnswer) {
  Made made = Make(ConsentMode::kTerminal, Rules({}));
  made.asker->permission_answers = {PermissionAnswer::kNo,
                                    PermissionAnswer::kYesForSession};
  ConsentDecision no =
      made.consent->ForHostCommand("make", "no sandbox", std::nullopt);
  EXPECT_FALSE(no.yes);
  EXPECT_EQ(no.how, "asked: no");
  ASSERT_EQ(made.asker->asked.size(), 1u);
  EXPECT_EQ(made.asker->asked[0].summary, "Run on the host: make");
  // The agent's reason is shown as the agent's words.
  EXPECT_EQ(made.asker->asked[0].detail, "garuda-agent: no sandbox");
  ConsentDecision yes = made.consent->ForHostCommand("make", "", std::nullopt);
  EXPECT_TRUE(yes.yes);
  EXPECT_EQ(yes.how, "asked: yes, and for this session: bash(make)");
  // Remembered: no third question.
  EXPECT_TRUE(made.consent->ForHostCommand("make", "", std::nullopt).yes);
  EXPECT_EQ(made.asker->asked.size(), 2u);
}

TEST(ConsentTest, TheChangeQuestionIsAskedAndAnIncompleteListIsNeverApplied) {
  Made made = Make(ConsentMode::kTerminal, Rules({}));
  made.asker->change_answers = {Answer::kApply, Answer::kApply};
  EXPECT_EQ(made.consent->ForCommandChanges(OneFile("a"), -1, std::nullopt).how,
            "asked: apply");
  ChangeSet incomplete = OneFile("a");
  incomplete.summary.set_incomplete(true);
  ConsentDecision decision =
      made.consent->ForCommandChanges(incomplete, -1, std::nullopt);
  EXPECT_FALSE(decision.yes);
  EXPECT_EQ(made.asker->change_questions, 2);
}

TEST(ConsentTest, AnEditIsOneFileOfAnEditTool) {
  Made made =
      Make(ConsentMode::kRules,
           Rules({{Verdict::kAllow, "edit_file"}, {Verdict::kAllow, "bash"}}));
  ChangeSet two = OneFile("a");
  two.changes.push_back(OneFile("b").changes[0]);
  EXPECT_FALSE(made.consent->ForEdit(two, "edit_file", -1, std::nullopt).yes);
  // "bash" is allowed, but it is not an edit tool.
  EXPECT_FALSE(
      made.consent->ForEdit(OneFile("a"), "bash", -1, std::nullopt).yes);
  EXPECT_TRUE(
      made.consent->ForEdit(OneFile("a"), "edit_file", -1, std::nullopt).yes);
}

TEST(ConsentTest, ASensitiveFileAsksDespiteAnAllowRule) {
  Made made =
      Make(ConsentMode::kRules, Rules({{Verdict::kAllow, "write_file"}}));
  ConsentDecision decision =
      made.consent->ForEdit(OneFile(".env"), "write_file", -1, std::nullopt);
  EXPECT_FALSE(decision.yes);
  EXPECT_TRUE(absl::StrContains(decision.how, "no person to ask"))
      << decision.how;
}

TEST(ConsentTest, OnlyTheRelayedModeTakesARelayedAnswerAndSaysSo) {
  Made relayed = Make(ConsentMode::kRelayed, Rules({}));
  ConsentDecision yes = relayed.consent->ForEdit(OneFile("a"), "edit_file", -1,
                                                 RelayedConsent{"acp", true});
  EXPECT_TRUE(yes.yes);
  EXPECT_EQ(yes.how, "answer relayed by garuda-agent from acp: yes");
  EXPECT_FALSE(
      relayed.consent->ForEdit(OneFile("a"), "edit_file", -1, std::nullopt)
          .yes);
  // The rules mode ignores it: nobody's yes.
  Made rules = Make(ConsentMode::kRules, Rules({}));
  EXPECT_FALSE(
      rules.consent
          ->ForEdit(OneFile("a"), "edit_file", -1, RelayedConsent{"acp", true})
          .yes);
}

// --apply-staged: without a person, a command's complete list is applied
// unless a rule speaks against a path; without the flag it is not.
// A relayed Apply comes through the agent: a deny rule on a changed path
// still discards the whole list. The control: the same answer for a list
// no rule denies is applied.
TEST(ConsentTest, ARelayedApplyStopsAtADeniedPath) {
  Made made = Make(ConsentMode::kRelayed,
                   Rules({{Verdict::kDeny, "write_file(secrets/**)"}}));
  ConsentDecision allowed = made.consent->ForCommandChanges(
      OneFile("src/x.c"), -1, RelayedConsent{"acp", true});
  EXPECT_TRUE(allowed.yes) << allowed.how;
  ChangeSet two = OneFile("src/x.c");
  two.changes.push_back(OneFile("secrets/key").changes[0]);
  ConsentDecision denied =
      made.consent->ForCommandChanges(two, -1, RelayedConsent{"acp", true});
  EXPECT_FALSE(denied.yes);
  EXPECT_TRUE(absl::StrContains(denied.how, "secrets/key")) << denied.how;
  EXPECT_TRUE(absl::StrContains(denied.how, "write_file(secrets/**)"))
      << denied.how;
  EXPECT_TRUE(absl::StrContains(denied.how, "relayed")) << denied.how;
}

TEST(ConsentTest, ApplyStagedAppliesWhatNoRuleStops) {
  Made plain = Make(ConsentMode::kRules, Permissions());
  ConsentDecision without =
      plain.consent->ForCommandChanges(OneFile("src/x.c"), -1, std::nullopt);
  EXPECT_FALSE(without.yes);  // the control: nothing lands by default
  EXPECT_TRUE(without.no_person) << without.how;

  Made flagged = Make(ConsentMode::kRules, Permissions());
  ASSERT_TRUE(flagged.consent->SetApplyStaged(true).ok());
  ConsentDecision with =
      flagged.consent->ForCommandChanges(OneFile("src/x.c"), -1, std::nullopt);
  EXPECT_TRUE(with.yes);
  EXPECT_TRUE(with.by_apply_staged);
  EXPECT_EQ(with.how, kApplyStagedHow);

  // A deny rule discards; a sensitive name asks first, so with nobody to
  // ask the list is kept for a person.
  Made denied = Make(ConsentMode::kRules,
                     Rules({{Verdict::kDeny, "write_file(src/**)"}}));
  ASSERT_TRUE(denied.consent->SetApplyStaged(true).ok());
  ConsentDecision no =
      denied.consent->ForCommandChanges(OneFile("src/x.c"), -1, std::nullopt);
  EXPECT_FALSE(no.yes);
  EXPECT_FALSE(no.no_person);
  EXPECT_TRUE(absl::StrContains(no.how, "write_file(src/**)")) << no.how;
  ConsentDecision sensitive =
      flagged.consent->ForCommandChanges(OneFile(".env"), -1, std::nullopt);
  EXPECT_FALSE(sensitive.yes) << sensitive.how;
  EXPECT_TRUE(sensitive.no_person);

  // Incomplete: never.
  ChangeSet incomplete = OneFile("src/x.c");
  incomplete.summary.set_incomplete(true);
  EXPECT_FALSE(
      flagged.consent->ForCommandChanges(incomplete, -1, std::nullopt).yes);
}

TEST(ConsentTest, ApplyStagedIsForTheRulesModeOnly) {
  Made terminal = Make(ConsentMode::kTerminal, Permissions());
  absl::Status refused = terminal.consent->SetApplyStaged(true);
  EXPECT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.message(), "--consent=rules"))
      << refused.message();
  EXPECT_TRUE(Make(ConsentMode::kRules, Permissions())
                  .consent->SetApplyStaged(true)
                  .ok());
}

}  // namespace
}  // namespace garuda
