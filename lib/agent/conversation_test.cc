#include "lib/agent/conversation.h"

#include "gtest/gtest.h"
#include "lib/changeset/test_tree.h"

namespace garuda {
namespace agent {
namespace {

provider::ChatMessage Message(const std::string& role,
                              const std::string& text) {
  provider::ChatMessage message;
  message.set_role(role);
  message.set_text(text);
  return message;
}

TEST(ConversationTest, ARestoredCallWithoutResultIsClosed) {
  Conversation conversation(nullptr);
  provider::ChatMessage asked = Message("assistant", "");
  asked.add_tool_calls()->set_id("c1");
  conversation.Restore({Message("user", "go"), asked});
  ASSERT_EQ(conversation.messages().size(), 3u);
  const provider::ChatMessage& closed = conversation.messages()[2];
  ASSERT_EQ(closed.tool_results_size(), 1);
  EXPECT_EQ(closed.tool_results(0).tool_call_id(), "c1");
  EXPECT_TRUE(closed.tool_results(0).is_error());
  // Control: a conversation that ended on an answer stays as it was.
  conversation.Restore({Message("user", "go"), Message("assistant", "done")});
  EXPECT_EQ(conversation.messages().size(), 2u);
}

TEST(ConversationTest, ANoteJoinsTheLastUserMessageAndIsJournaled) {
  std::string home = garuda::testing::NewTempDir("conversation");
  auto journal = Journal::Open(home, "s-1");
  ASSERT_TRUE(journal.ok()) << journal.status();
  Conversation conversation(journal->get());
  ASSERT_TRUE(conversation.Add(Message("user", "fix it")).ok());
  ASSERT_TRUE(conversation.NoteForModel("[note]").ok());
  ASSERT_EQ(conversation.messages().size(), 1u);
  EXPECT_EQ(conversation.messages()[0].text(), "fix it\n\n[note]");
  ASSERT_TRUE(conversation.Add(Message("assistant", "ok")).ok());
  ASSERT_TRUE(conversation.NoteForModel("[alone]").ok());
  ASSERT_EQ(conversation.messages().size(), 3u);
  // The journal reads back the same conversation.
  std::string project;
  absl::StatusOr<std::vector<provider::ChatMessage>> read =
      ReadConversation((*journal)->path(), &project);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 3u);
  EXPECT_EQ((*read)[0].text(), "fix it\n\n[note]");

  ASSERT_TRUE(conversation.Compacted(Message("user", "summary"), 1234).ok());
  ASSERT_EQ(conversation.messages().size(), 1u);
  EXPECT_EQ(conversation.messages()[0].text(), "summary");
  read = ReadConversation((*journal)->path(), &project);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].text(), "summary");

  ASSERT_TRUE(conversation.Clear().ok());
  EXPECT_TRUE(conversation.messages().empty());
  read = ReadConversation((*journal)->path(), &project);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->empty());
}

}  // namespace
}  // namespace agent
}  // namespace garuda
