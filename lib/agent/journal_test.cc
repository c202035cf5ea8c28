#include "lib/agent/journal.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
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

JournalRecord Record(const provider::ChatMessage& message) {
  JournalRecord record;
  *record.mutable_message() = message;
  return record;
}

// Two sessions of the same second: their ids sort by process id ("1093"
// before "341"), their list by the time each started.
TEST(JournalTest, SessionsOfOneSecondAreListedByTheirStart) {
  std::string home = garuda::testing::NewTempDir("home");
  auto start = [&](const std::string& id, absl::Time time,
                   const std::string& prompt) {
    auto journal = Journal::Open(home, id);
    ASSERT_TRUE(journal.ok()) << journal.status();
    JournalRecord record;
    record.mutable_start()->set_session_id(id);
    record.mutable_start()->set_project("/p");
    record.mutable_start()->set_time(absl::FormatTime(time));
    ASSERT_TRUE((*journal)->Append(record).ok());
    ASSERT_TRUE((*journal)->Append(Record(Message("user", prompt))).ok());
  };
  absl::Time second = absl::FromUnixSeconds(1800000000);
  start("20270115T080000-341-aaaaaa", second + absl::Milliseconds(100),
        "older");
  start("20270115T080000-1093-bbbbbb", second + absl::Milliseconds(700),
        "latest");
  std::vector<SessionSummary> sessions = ListSessions(home, "/p");
  ASSERT_EQ(sessions.size(), 2u);
  EXPECT_EQ(sessions[0].first_prompt, "older");
  EXPECT_EQ(sessions[1].first_prompt, "latest");
}

TEST(JournalTest, WritesAsItGoesAndReadsBack) {
  std::string home = garuda::testing::NewTempDir("home");
  auto journal = Journal::Open(home, "s-1");
  ASSERT_TRUE(journal.ok()) << journal.status();
  EXPECT_EQ((*journal)->path(), home + "/.garuda/sessions/s-1/journal.jsonl");
  struct stat st;
  ASSERT_EQ(::stat((*journal)->path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  JournalRecord start;
  start.mutable_start()->set_session_id("s-1");
  ASSERT_TRUE((*journal)->Append(start).ok());
  ASSERT_TRUE((*journal)->Append(Record(Message("user", "hello"))).ok());
  // Readable before the session ends: written as it goes.
  auto conversation = ReadConversation((*journal)->path());
  ASSERT_TRUE(conversation.ok()) << conversation.status();
  ASSERT_EQ(conversation->size(), 1u);
  ASSERT_TRUE((*journal)->Append(Record(Message("assistant", "hi"))).ok());
  // A note journaled as its own user message joins the one before.
  ASSERT_TRUE((*journal)->Append(Record(Message("user", "first"))).ok());
  ASSERT_TRUE((*journal)->Append(Record(Message("user", "note"))).ok());
  conversation = ReadConversation((*journal)->path());
  ASSERT_TRUE(conversation.ok());
  ASSERT_EQ(conversation->size(), 3u);
  EXPECT_EQ(conversation->at(2).text(), "first\n\nnote");
}

// A session in use cannot be opened a second time (a second --resume, an
// editor's session/load): nothing of the second is written. The control:
// once the first has ended, the same open works.
TEST(JournalTest, ASessionInUseIsNotOpenedTwice) {
  std::string home = garuda::testing::NewTempDir("home");
  auto first = Journal::Open(home, "s-2");
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = Journal::Open(home, "s-2");
  ASSERT_FALSE(second.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(second.status()));
  EXPECT_TRUE(absl::StrContains(second.status().message(), "s-2 is in use"))
      << second.status();
  first->reset();
  auto again = Journal::Open(home, "s-2");
  EXPECT_TRUE(again.ok()) << again.status();
}

TEST(JournalTest, ClearAndATornLastLine) {
  std::string home = garuda::testing::NewTempDir("home");
  auto journal = Journal::Open(home, "s-2");
  ASSERT_TRUE(journal.ok());
  ASSERT_TRUE((*journal)->Append(Record(Message("user", "old"))).ok());
  JournalRecord clear;
  clear.mutable_clear();
  ASSERT_TRUE((*journal)->Append(clear).ok());
  ASSERT_TRUE((*journal)->Append(Record(Message("user", "new"))).ok());
  auto fd = OpenFile((*journal)->path(), O_WRONLY | O_APPEND | O_CLOEXEC);
  ASSERT_TRUE(fd.ok());
  ASSERT_TRUE(WriteAll(fd->get(), "{\"message\":{\"role\":\"assi").ok());
  auto conversation = ReadConversation((*journal)->path());
  ASSERT_TRUE(conversation.ok()) << conversation.status();
  ASSERT_EQ(conversation->size(), 1u);
  EXPECT_EQ(conversation->at(0).text(), "new");
}

TEST(JournalTest, UnknownSessionAndBadIds) {
  std::string home = garuda::testing::NewTempDir("home");
  auto path = SessionJournalPath(home, "nothing-here");
  ASSERT_TRUE(path.ok());
  auto conversation = ReadConversation(*path);
  EXPECT_TRUE(absl::IsNotFound(conversation.status()));
  EXPECT_TRUE(absl::StrContains(conversation.status().message(), "--resume"));
  EXPECT_FALSE(SessionJournalPath(home, "../escape").ok());
  EXPECT_FALSE(Journal::Open(home, "a/b").ok());
}

TEST(JournalTest, NewSessionIdsAreValidAndDiffer) {
  std::string home = garuda::testing::NewTempDir("home");
  std::string a = NewSessionId(absl::Now());
  std::string b = NewSessionId(absl::Now());
  EXPECT_NE(a, b);
  EXPECT_TRUE(SessionJournalPath(home, a).ok()) << a;
}

}  // namespace
}  // namespace agent
}  // namespace garuda
