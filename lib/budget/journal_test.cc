#include "lib/budget/journal.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdlib>
#include <random>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"

namespace garuda {
namespace budget {
namespace {

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "journalXXXXXX");
    home_ = ::mkdtemp(templ.data());
    auto dir = GarudaSessionFolder(home_, "s1");
    ASSERT_TRUE(dir.ok());
    path_ = BudgetJournalFile(*dir);
  }
  std::unique_ptr<JournaledLedger> Open(int64_t limit) {
    auto journal = JournaledLedger::Open({path_, limit});
    EXPECT_TRUE(journal.ok()) << journal.status();
    return journal.ok() ? std::move(*journal) : nullptr;
  }
  std::string Text() {
    auto text = ReadFileToString(path_);
    EXPECT_TRUE(text.ok());
    return text.value_or("");
  }
  void Write(const std::string& text) {
    ASSERT_TRUE(MakeDirectories(Dirname(path_), 0700).ok());
    ASSERT_TRUE(WriteFileAtomically(path_, text, 0600).ok());
  }
  std::string home_;
  std::string path_;
};

TEST_F(JournalTest, NewJournalStartsWithTheLimit) {
  auto journal = Open(5000);
  ASSERT_TRUE(journal);
  EXPECT_EQ(journal->ledger().limit(), 5000);
  EXPECT_TRUE(journal->start_notes().empty());
  std::string text = Text();
  EXPECT_TRUE(absl::StartsWith(text, "{\"start\":{\"limit\":\"5000\"")) << text;
  struct stat info;
  ASSERT_EQ(::stat(path_.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600);
  ASSERT_EQ(::stat(Dirname(path_).c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700);
}

TEST_F(JournalTest, GrantIsOnDiskAfterCommitAndNotBefore) {
  auto journal = Open(5000);
  ASSERT_TRUE(journal);
  size_t before = Text().size();
  auto granted = journal->Reserve(kTopAgent, 700, "turn", "req-1");
  ASSERT_TRUE(granted.ok() && granted->granted);
  EXPECT_EQ(Text().size(), before);  // queued, not answered yet
  ASSERT_TRUE(journal->Commit().ok());
  EXPECT_TRUE(absl::StrContains(Text(), "\"requestId\":\"req-1\""));
}

// A settle that lowers a charge is not written before its answer: if the
// process dies before the next write, the resumed session keeps the whole
// reservation charged (the safe side). Flush() writes it.
TEST_F(JournalTest, LoweringSettleWaitsForTheNextWriteAndItsLossIsSafe) {
  auto journal = Open(5000);
  ASSERT_TRUE(journal);
  auto granted = journal->Reserve(kTopAgent, 700, "turn", "req-1");
  ASSERT_TRUE(journal->Commit().ok());
  ASSERT_TRUE(journal->Settle(kTopAgent, granted->reservation, 100, true).ok());
  ASSERT_TRUE(journal->Commit().ok());
  EXPECT_TRUE(journal->flush_pending());
  // What a process killed now leaves behind, resumed in another session.
  const std::string killed_now = Text();
  EXPECT_FALSE(absl::StrContains(killed_now, "\"settle\""));
  Replay replay = *ReplayJournal(killed_now, path_);
  EXPECT_EQ(replay.ledger.OpenReservations().size(), 1u);  // charged in full
  // A grant written later carries the queued settle with it, in order.
  ASSERT_TRUE(journal->Reserve(kTopAgent, 50, "turn", "req-2").ok());
  ASSERT_TRUE(journal->Commit().ok());
  std::string text = Text();
  ASSERT_TRUE(absl::StrContains(text, "\"settle\""));
  EXPECT_LT(text.find("\"settle\""), text.find("req-2"));
  ASSERT_TRUE(journal->Flush().ok());
  EXPECT_FALSE(journal->flush_pending());
}

TEST_F(JournalTest, RefusalsAndFloorsWaitAndCloseWritesThem) {
  auto journal = Open(100);
  ASSERT_TRUE(journal);
  size_t before = Text().size();
  auto refused = journal->Reserve(kTopAgent, 500, "turn", "too-big");
  ASSERT_TRUE(refused.ok() && !refused->granted);
  ASSERT_TRUE(journal->SetFloor(kTopAgent, 10).ok());
  ASSERT_TRUE(journal->Commit().ok());
  EXPECT_EQ(Text().size(), before);  // nothing raised a charge
  ASSERT_TRUE(journal->Close().ok());
  EXPECT_TRUE(absl::StrContains(Text(), "too-big"));
  EXPECT_FALSE(journal->Reserve(kTopAgent, 1, "turn", "late").ok());
}

TEST_F(JournalTest, ResumeReplaysTheSessionCharges) {
  {
    auto journal = Open(10000);
    ASSERT_TRUE(journal);
    auto first = journal->Reserve(kTopAgent, 1000, "turn", "a");
    ASSERT_TRUE(journal->Settle(kTopAgent, first->reservation, 400, true).ok());
    auto unreported = journal->Reserve(kTopAgent, 500, "turn", "b");
    ASSERT_TRUE(
        journal->Settle(kTopAgent, unreported->reservation, 0, false).ok());
    auto child = journal->OpenChild(kTopAgent, 3000, "task-7");
    auto debit = journal->Reserve(child->child, 800, "turn", "c");
    ASSERT_TRUE(
        journal->Settle(child->child, debit->reservation, 600, true).ok());
    ChildReport report;
    report.set_reported_tokens(600);
    ASSERT_TRUE(journal->CloseChild(kTopAgent, child->child, report).ok());
    ASSERT_TRUE(journal->SetFloor(kTopAgent, 100).ok());
    ASSERT_TRUE(journal->Commit().ok());
    EXPECT_EQ(journal->ledger().Status().spent(), 1500);
  }
  std::string text = Text();
  EXPECT_TRUE(absl::StrContains(text, "\"childDebit\":{"));
  EXPECT_TRUE(absl::StrContains(text, "\"reportId\":\"task-7\""));
  auto resumed = Open(10000);
  ASSERT_TRUE(resumed);
  BudgetStatus status = resumed->ledger().Status();
  EXPECT_EQ(status.spent(), 1500);  // never reset to zero
  EXPECT_EQ(status.left(), 8500);
  EXPECT_EQ(status.floor(), 0);  // a floor belongs to its run
  ASSERT_EQ(status.agents_size(), 2);
  EXPECT_EQ(status.agents(1).report_id(), "task-7");
  EXPECT_EQ(status.agents(1).spent(), 600);
  EXPECT_EQ(status.agents(0).unreported(), 500);
  ASSERT_EQ(resumed->start_notes().size(), 1u);
  EXPECT_TRUE(absl::StrContains(resumed->start_notes()[0], "spent 1500"));
  // The next ids follow the replayed ones.
  auto next = resumed->Reserve(kTopAgent, 1, "turn", "d");
  EXPECT_EQ(next->reservation, 4u);
}

TEST_F(JournalTest, ResumeWithAnotherLimitKeepsWhatWasSpent) {
  {
    auto journal = Open(10000);
    auto id = journal->Reserve(kTopAgent, 3000, "turn", "a");
    ASSERT_TRUE(journal->Settle(kTopAgent, id->reservation, 3000, true).ok());
    ASSERT_TRUE(journal->Commit().ok());
  }
  auto smaller = Open(2000);
  ASSERT_TRUE(smaller);
  EXPECT_EQ(smaller->ledger().Left(kTopAgent), 0);
  EXPECT_FALSE(smaller->Reserve(kTopAgent, 1, "turn", "b")->granted);
}

TEST_F(JournalTest, AnExtendedLeaseReplaysAndCountsAtACrash) {
  {
    auto journal = Open(10000);
    auto child = journal->OpenChild(kTopAgent, 2000, "task-1");
    ASSERT_TRUE(child.ok() && child->granted);
    auto more = journal->ExtendChild(kTopAgent, child->child, 3000);
    ASSERT_TRUE(more.ok() && more->granted);
    EXPECT_FALSE(journal->ExtendChild(kTopAgent, child->child, 9000)->granted);
    ASSERT_TRUE(journal->Reserve(child->child, 4500, "turn", "a").ok());
    ASSERT_TRUE(journal->Commit().ok());
  }
  EXPECT_TRUE(absl::StrContains(Text(), "extendChild")) << Text();
  // The reservation past the first lease replays (a lease of 2000 could
  // not have granted it) and counts as spent.
  auto resumed = Open(10000);
  ASSERT_TRUE(resumed);
  EXPECT_EQ(resumed->ledger().Status().spent(), 4500);
}

TEST_F(JournalTest, OpenAtACrashCountsAsSpent) {
  {
    auto journal = Open(10000);
    ASSERT_TRUE(journal->Reserve(kTopAgent, 1200, "turn", "a").ok());
    auto child = journal->OpenChild(kTopAgent, 4000, "task-1");
    auto grandchild = journal->OpenChild(child->child, 1000, "task-1.1");
    ASSERT_TRUE(journal->Reserve(child->child, 300, "turn", "b").ok());
    ASSERT_TRUE(journal->Reserve(grandchild->child, 200, "turn", "c").ok());
    ASSERT_TRUE(journal->Commit().ok());
    // The budgeter dies here: no settle, no close.
  }
  auto status_before = ReadJournal(path_);
  ASSERT_TRUE(status_before.ok());
  EXPECT_EQ(status_before->ledger.Status().reserved(), 1700);

  auto resumed = Open(10000);
  ASSERT_TRUE(resumed);
  BudgetStatus status = resumed->ledger().Status();
  EXPECT_EQ(status.spent(), 1700);
  EXPECT_EQ(status.reserved(), 0);
  EXPECT_EQ(status.leased(), 0);
  EXPECT_EQ(status.left(), 8300);
  EXPECT_TRUE(absl::StrContains(Text(), "\"recovered\":true"));
  bool noted = false;
  for (const std::string& note : resumed->start_notes()) {
    noted = noted || absl::StrContains(note, "charged 1700 tokens");
  }
  EXPECT_TRUE(noted);
  // And a second resume replays the recovery records as they are.
  resumed.reset();
  auto again = Open(10000);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->ledger().Status().spent(), 1700);
}

TEST_F(JournalTest, CorruptLineStopsTheStartWithItsNumber) {
  {
    auto journal = Open(10000);
    auto id = journal->Reserve(kTopAgent, 1000, "turn", "a");
    ASSERT_TRUE(journal->Settle(kTopAgent, id->reservation, 900, true).ok());
    ASSERT_TRUE(journal->Commit().ok());
  }
  std::vector<std::string> lines = absl::StrSplit(Text(), '\n');
  ASSERT_EQ(lines.size(), 4u);  // start, grant, settle, ""
  lines[1] = "{\"grant\":{\"reservation\":\"1\",\"tokens\":";  // cut
  std::string corrupt = absl::StrJoin(lines, "\n");
  Write(corrupt);
  auto journal = JournaledLedger::Open({path_, 10000});
  ASSERT_FALSE(journal.ok());
  EXPECT_TRUE(absl::StrContains(journal.status().message(),
                                path_ + ":2: not a budget record"))
      << journal.status();
  EXPECT_EQ(Text(), corrupt);  // kept as it is: never reset
  EXPECT_FALSE(ReadJournal(path_).ok());
}

TEST_F(JournalTest, RecordThatContradictsTheLedgerStopsTheStart) {
  Write(
      "{\"start\":{\"limit\":\"1000\"}}\n"
      "{\"grant\":{\"reservation\":\"1\",\"tokens\":\"600\"}}\n"
      "{\"grant\":{\"reservation\":\"5\",\"tokens\":\"100\"}}\n");
  auto journal = JournaledLedger::Open({path_, 1000});
  ASSERT_FALSE(journal.ok());
  EXPECT_TRUE(absl::StrContains(journal.status().message(), ":3: "))
      << journal.status();
  Write(
      "{\"start\":{\"limit\":\"1000\"}}\n"
      "{\"settle\":{\"reservation\":\"1\",\"charged\":\"600\"}}\n");
  EXPECT_TRUE(absl::StrContains(
      JournaledLedger::Open({path_, 1000}).status().message(), ":2: "));
  Write("{\"grant\":{\"reservation\":\"1\",\"tokens\":\"600\"}}\n");
  EXPECT_TRUE(
      absl::StrContains(JournaledLedger::Open({path_, 1000}).status().message(),
                        ":1: the journal must begin with a start record"));
  Write("{\"start\":{\"limit\":\"1000\"},\"bogus\":1}\n");
  EXPECT_TRUE(absl::StrContains(
      JournaledLedger::Open({path_, 1000}).status().message(), ":1: "));
}

TEST_F(JournalTest, TornLastLineIsDroppedAndSaid) {
  {
    auto journal = Open(10000);
    ASSERT_TRUE(journal->Reserve(kTopAgent, 1000, "turn", "a").ok());
    ASSERT_TRUE(journal->Commit().ok());
  }
  std::string whole = Text();
  Write(whole + "{\"grant\":{\"reserv");
  auto resumed = Open(10000);
  ASSERT_TRUE(resumed);
  EXPECT_EQ(resumed->ledger().Status().spent(), 1000);
  EXPECT_TRUE(absl::StrContains(resumed->start_notes()[0], "cut short"));
  EXPECT_TRUE(absl::StartsWith(Text(), whole));
  EXPECT_FALSE(absl::StrContains(Text(), "reserv\n"));
  resumed.reset();
  EXPECT_TRUE(ReadJournal(path_).ok());
}

TEST_F(JournalTest, LastLineWithoutNewlineThatParsesIsKept) {
  {
    auto journal = Open(10000);
    ASSERT_TRUE(journal->Commit().ok());
  }
  std::string text = Text();
  Write(text + "{\"grant\":{\"reservation\":\"1\",\"tokens\":\"250\"}}");
  auto resumed = Open(10000);
  ASSERT_TRUE(resumed);
  EXPECT_EQ(resumed->ledger().Status().spent(), 250);
  resumed.reset();
  EXPECT_TRUE(ReadJournal(path_).ok());
}

TEST_F(JournalTest, OneBudgeterPerSession) {
  auto first = Open(1000);
  ASSERT_TRUE(first);
  auto second = JournaledLedger::Open({path_, 1000});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(second.status().message(), "in use"));
}

TEST_F(JournalTest, FailedWriteRefusesEverythingAfter) {
  auto journal = Open(1000);
  ASSERT_TRUE(journal);
  // Make the next write fail: the file system is full.
  int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (full < 0) GTEST_SKIP() << "no /dev/full";
  // Swap the journal's descriptor for /dev/full behind its back.
  auto granted = journal->Reserve(kTopAgent, 10, "turn", "a");
  ASSERT_TRUE(granted.ok());
  // The descriptor is the lowest one the journal holds; find it by path.
  int journal_fd = -1;
  for (int fd = 3; fd < 256; ++fd) {
    char link[64], target[4096];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = ::readlink(link, target, sizeof(target) - 1);
    if (n > 0 && std::string(target, n) == path_) journal_fd = fd;
  }
  ASSERT_GE(journal_fd, 0);
  ASSERT_EQ(::dup2(full, journal_fd), journal_fd);
  ::close(full);
  EXPECT_FALSE(journal->Commit().ok());
  EXPECT_FALSE(journal->Reserve(kTopAgent, 1, "turn", "b").ok());
  EXPECT_FALSE(journal->Commit().ok());
}

TEST_F(JournalTest, CloseRecordsEachChargeBelowTheChild) {
  auto journal = Open(10000);
  auto child = journal->OpenChild(kTopAgent, 5000, "task-1");
  auto grandchild = journal->OpenChild(child->child, 1000, "task-1.1");
  ASSERT_TRUE(journal->Reserve(grandchild->child, 100, "turn", "x").ok());
  ChildReport wrong;
  wrong.set_report_id("task-9");
  EXPECT_EQ(journal->CloseChild(kTopAgent, child->child, wrong).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto closed = journal->CloseChild(kTopAgent, child->child, ChildReport());
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(closed->charged, 100);
  ASSERT_TRUE(journal->Commit().ok());
  std::string text = Text();
  EXPECT_TRUE(absl::StrContains(text, "\"childDebit\":{\"reservation\":\"1\""));
  EXPECT_TRUE(absl::StrContains(text, "\"reportId\":\"task-1.1\""));
  auto replay = ReadJournal(path_);
  ASSERT_TRUE(replay.ok()) << replay.status();
  EXPECT_EQ(replay->ledger.Status().spent(), 100);
  EXPECT_EQ(replay->ledger.Left(kTopAgent), 9900);
}

TEST(RecordTest, FormatAndParseRoundTrip) {
  JournalRecord record;
  record.mutable_grant()->set_reservation(uint64_t{1} << 60);
  record.mutable_grant()->set_tokens(kMaxTokens);
  record.mutable_grant()->set_purpose("retry \"2\"\n");
  std::string line = FormatRecord(record);
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1);
  auto parsed = ParseRecord(line.substr(0, line.size() - 1));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->grant().reservation(), uint64_t{1} << 60);
  EXPECT_EQ(parsed->grant().purpose(), "retry \"2\"\n");
  EXPECT_FALSE(ParseRecord("{}").ok());
  EXPECT_FALSE(ParseRecord("{\"grant\":{\"tokens\":\"x\"}}").ok());
}

TEST(RecordTest, FastFormatIsByteForByteProtobufs) {
  std::mt19937 random(7);
  auto number = [&]() -> int64_t {
    switch (random() % 4) {
      case 0:
        return 0;
      case 1:
        return random() % 1000;
      case 2:
        return kMaxTokens;
      default:
        return (int64_t{1} << 62) + random();
    }
  };
  const std::vector<std::string> labels = {
      "",      "turn",   "retry",       "req-1#2",     "a b",        "quote\"d",
      "tab\t", "<html>", "caf\xc3\xa9", "x/y:z@w+q=r", "back\\slash"};
  for (int i = 0; i < 2000; ++i) {
    JournalRecord record;
    switch (i % 3) {
      case 0: {
        JournalGrant* grant = record.mutable_grant();
        grant->set_reservation(number());
        grant->set_agent(random() % 3 == 0 ? 0 : random());
        grant->set_tokens(number());
        grant->set_purpose(labels[random() % labels.size()]);
        grant->set_request_id(labels[random() % labels.size()]);
        break;
      }
      case 1: {
        JournalSettle* settle = record.mutable_settle();
        settle->set_reservation(number());
        settle->set_used(number());
        settle->set_usage_reported(random() % 2);
        settle->set_charged(number());
        settle->set_recovered(random() % 2);
        break;
      }
      default: {
        JournalChildDebit* debit = record.mutable_child_debit();
        debit->set_reservation(number());
        debit->set_child(random() % 5);
        debit->set_report_id(labels[random() % labels.size()]);
        debit->set_used(number());
        debit->set_usage_reported(random() % 2);
        debit->set_charged(number());
        debit->set_recovered(random() % 2);
        break;
      }
    }
    ASSERT_EQ(FormatRecord(record), MessageToJsonLine(record) + "\n")
        << record.ShortDebugString();
  }
}

}  // namespace
}  // namespace budget
}  // namespace garuda
