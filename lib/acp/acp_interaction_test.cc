// The questions as the editor gets them, over a socketpair standing in for
// the front: which options are offered, and that an option not offered, a
// cancelled answer or a cancel of the turn is a no (each beside the answer
// that says yes).
#include "lib/acp/acp_interaction.h"

#include <poll.h>

#include <functional>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "lib/acp/json_rpc.h"
#include "lib/acp/worker_link.h"
#include "lib/base/files.h"
#include "lib/changeset/test_tree.h"
#include "lib/ipc/channel.h"

namespace garuda {
namespace acp {
namespace {

class AcpInteractionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = garuda::testing::NewTempDir("acp-interaction");
    garuda::testing::Write(root_ + "/notes.txt", "old line\n");
    absl::StatusOr<std::unique_ptr<Project>> project = Project::Open(root_);
    ASSERT_TRUE(project.ok()) << project.status();
    project_ = *std::move(project);
    absl::StatusOr<std::pair<UniqueFd, UniqueFd>> pair = ipc::MakeSocketPair();
    ASSERT_TRUE(pair.ok());
    worker_end_ = std::move(pair->first);
    front_end_ = std::move(pair->second);
    link_ = std::make_unique<WorkerLink>(worker_end_.get());
    interaction_ =
        std::make_unique<AcpInteraction>(link_.get(), project_.get(), 0);
    interaction_->set_session_id("s1");
    interaction_->set_in_turn(true);
  }

  // Runs `ask` while the fake front reads the request and answers it with
  // `answer(request)` (a JSON result), unless `answer` is empty. The
  // request is kept in `request_`.
  void WithFront(std::function<void()> ask,
                 std::function<std::optional<Value>(const Message&)> answer) {
    std::thread front([&] {
      LineReader reader(front_end_.get(), kMaxRelayLineBytes);
      absl::StatusOr<std::optional<LineReader::Line>> line = reader.ReadLine();
      ASSERT_TRUE(line.ok() && line->has_value());
      Parsed parsed = ParseMessage((*line)->text);
      ASSERT_TRUE(parsed.message.has_value());
      request_ = *parsed.message;
      std::optional<Value> result = answer(request_);
      if (result) {
        Parsed response = ParseMessage(
            ResultLine(request_.id, *result)
                .substr(0, ResultLine(request_.id, *result).size() - 1));
        link_->Deliver(*response.message);
      } else {
        link_->CancelTurn();  // session/cancel instead of an answer
      }
    });
    ask();
    front.join();
  }

  static Value Selected(const std::string& option) {
    Value outcome = Object();
    Set(outcome, "outcome", Str("selected"));
    Set(outcome, "optionId", Str(option));
    Value result = Object();
    Set(result, "outcome", outcome);
    return result;
  }

  std::vector<std::string> OfferedOptions() const {
    std::vector<std::string> ids;
    const Value* options = Field(request_.params, "options");
    if (options == nullptr) return ids;
    for (const Value& option : options->list_value().values()) {
      ids.push_back(StringField(option, "optionId").value_or(""));
    }
    return ids;
  }

  ChangeSet OneFile(const std::string& content) {
    ChangeSet change_set;
    Change change;
    change.entry.set_path("notes.txt");
    change.entry.set_kind(CHANGE_KIND_MODIFIED);
    change.entry.set_new_type(FILE_TYPE_REGULAR);
    change.entry.set_size(content.size());
    change.content = content;
    change_set.changes.push_back(change);
    return change_set;
  }

  std::string root_;
  std::unique_ptr<Project> project_;
  UniqueFd worker_end_, front_end_;
  std::unique_ptr<WorkerLink> link_;
  std::unique_ptr<AcpInteraction> interaction_;
  Message request_;
};

TEST_F(AcpInteractionTest, AnEditOffersAllowAlwaysOnlyWithASessionRule) {
  PermissionQuestion question;
  question.tool = "edit_file";
  question.summary = "Edit notes.txt";
  question.session_rule = "edit_file(notes.txt)";
  PermissionAnswer answer = PermissionAnswer::kNo;
  WithFront([&] { answer = interaction_->AskEdit(question, OneFile("new\n")); },
            [](const Message&) { return Selected("allow_always"); });
  EXPECT_EQ(answer, PermissionAnswer::kYesForSession);
  EXPECT_EQ(
      OfferedOptions(),
      (std::vector<std::string>{"allow_once", "allow_always", "reject_once"}));
  EXPECT_EQ(request_.method, "session/request_permission");
  const Value* content = Field(*Field(request_.params, "toolCall"), "content");
  ASSERT_NE(content, nullptr);
  const Value& diff = content->list_value().values(0);
  EXPECT_EQ(StringField(diff, "type"), "diff");
  EXPECT_EQ(StringField(diff, "oldText"), "old line\n");
  EXPECT_EQ(StringField(diff, "newText"), "new\n");

  // Without a session rule it is not offered, and choosing it anyway is no.
  question.session_rule.reset();
  WithFront([&] { answer = interaction_->AskEdit(question, OneFile("new\n")); },
            [](const Message&) { return Selected("allow_always"); });
  EXPECT_EQ(answer, PermissionAnswer::kNo);
  EXPECT_EQ(OfferedOptions(),
            (std::vector<std::string>{"allow_once", "reject_once"}));
}

TEST_F(AcpInteractionTest, CancelledUnknownAndCancelOfTheTurnAreNo) {
  PermissionQuestion question;
  question.tool = "bash";
  question.summary = "Run on the host: make";
  PermissionAnswer answer = PermissionAnswer::kNo;
  // Control: allow_once says yes.
  WithFront([&] { answer = interaction_->AskPermission(question); },
            [](const Message&) { return Selected("allow_once"); });
  EXPECT_EQ(answer, PermissionAnswer::kYes);
  WithFront([&] { answer = interaction_->AskPermission(question); },
            [](const Message&) {
              Value outcome = Object();
              Set(outcome, "outcome", Str("cancelled"));
              Value result = Object();
              Set(result, "outcome", outcome);
              return std::optional<Value>(result);
            });
  EXPECT_EQ(answer, PermissionAnswer::kNo);
  WithFront([&] { answer = interaction_->AskPermission(question); },
            [](const Message&) { return Selected("yes_please"); });
  EXPECT_EQ(answer, PermissionAnswer::kNo);
  WithFront([&] { answer = interaction_->AskPermission(question); },
            [](const Message&) { return std::optional<Value>(); });
  EXPECT_EQ(answer, PermissionAnswer::kNo);
  // Until the next turn begins, nothing more is asked: no at once.
  EXPECT_EQ(interaction_->AskPermission(question), PermissionAnswer::kNo);
  link_->BeginTurn();
  WithFront([&] { answer = interaction_->AskPermission(question); },
            [](const Message&) { return Selected("allow_once"); });
  EXPECT_EQ(answer, PermissionAnswer::kYes);
}

TEST_F(AcpInteractionTest, AnIncompleteChangeListOffersDiscardOnly) {
  ChangeSet change_set = OneFile("applied\n");
  Rendered rendered;
  rendered.summary = "M notes.txt";
  Answer answer = Answer::kDiscard;
  // Control: a complete list offers Apply, and Apply applies.
  WithFront([&] { answer = interaction_->AskChangeSet(change_set, rendered); },
            [](const Message&) { return Selected("apply"); });
  EXPECT_EQ(answer, Answer::kApply);
  EXPECT_EQ(OfferedOptions(), (std::vector<std::string>{"apply", "discard"}));

  change_set.summary.set_incomplete(true);
  WithFront([&] { answer = interaction_->AskChangeSet(change_set, rendered); },
            [](const Message&) { return Selected("apply"); });
  EXPECT_EQ(answer, Answer::kDiscard);
  EXPECT_EQ(OfferedOptions(), (std::vector<std::string>{"discard"}));
}

TEST_F(AcpInteractionTest, AFileWhoseContentCannotBeShownGetsNoHalfDiff) {
  // Present but over the diff's size: named in the text, no diff (a diff
  // without its old side would look like a new file).
  garuda::testing::Write(root_ + "/notes.txt", std::string(300 * 1024, 'x'));
  Rendered rendered;
  rendered.summary = "M notes.txt";
  WithFront([&] { interaction_->AskChangeSet(OneFile("small\n"), rendered); },
            [](const Message&) { return Selected("discard"); });
  const Value* content = Field(*Field(request_.params, "toolCall"), "content");
  ASSERT_NE(content, nullptr);
  for (const Value& block : content->list_value().values()) {
    EXPECT_NE(StringField(block, "type"), "diff");
  }
  // Control: a small present file gets its diff.
  garuda::testing::Write(root_ + "/notes.txt", "old line\n");
  WithFront([&] { interaction_->AskChangeSet(OneFile("small\n"), rendered); },
            [](const Message&) { return Selected("discard"); });
  content = Field(*Field(request_.params, "toolCall"), "content");
  bool diff = false;
  for (const Value& block : content->list_value().values()) {
    diff = diff || StringField(block, "type") == "diff";
  }
  EXPECT_TRUE(diff);
}

TEST(ToolKindTest, GarudaToolsAsAcpKinds) {
  EXPECT_STREQ(BuiltinToolRows().KindName("bash"), "execute");
  EXPECT_STREQ(BuiltinToolRows().KindName("edit_file"), "edit");
  EXPECT_STREQ(BuiltinToolRows().KindName("write_file"), "edit");
  EXPECT_STREQ(BuiltinToolRows().KindName("read_file"), "read");
  EXPECT_STREQ(BuiltinToolRows().KindName("grep"), "search");
  EXPECT_STREQ(BuiltinToolRows().KindName("find_references"), "search");
  EXPECT_STREQ(BuiltinToolRows().KindName("task"), "think");
  EXPECT_STREQ(BuiltinToolRows().KindName("anything_else"), "other");
}

}  // namespace
}  // namespace acp
}  // namespace garuda
