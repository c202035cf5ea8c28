// The meter and the client against a real BudgetServer on a thread, over
// socketpairs (the multi-process tests are in tests/budget/).
#include "lib/budget/meter.h"

#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <thread>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/budget/journal.h"
#include "lib/budget/server.h"
#include "lib/ipc/channel.h"

namespace garuda {
namespace budget {
namespace {

TEST(EstimateTest, FourCharactersPerTokenOverTheWholeRequestPlusOutput) {
  RequestShape shape;
  shape.system_prompt_chars = 4000;
  shape.message_chars = 3001;
  shape.tool_definition_chars = 2000;
  shape.other_chars = 0;
  shape.output_limit = 8192;
  EXPECT_EQ(EstimateRequestTokens(shape), 2251 + 8192);  // ceil(9001 / 4)
  // The measured context plus new messages wins when it is larger.
  shape.last_measured_input_tokens = 5000;
  shape.new_message_chars = 10;
  EXPECT_EQ(EstimateRequestTokens(shape), 5003 + 8192);
  EXPECT_EQ(TokensForChars(0), 0);
  EXPECT_EQ(TokensForChars(1), 1);
  EXPECT_EQ(TokensForChars(8), 2);
}

TEST(EstimateTest, FloorBoundsEachPendingResultWithWorstCaseEscaping) {
  FloorShape shape;
  shape.last_reservation = 10000;
  shape.current_input_tokens = 6000;
  shape.output_limit = 4096;
  EXPECT_EQ(EstimateFloorTokens(shape), 10096);
  shape.pending_tool_results = 2;
  shape.pending_subagent_results = 1;
  shape.empty_result_message_chars = 80;
  // A tool result: 100000 chars * 6 + 80 = 600080 chars = 150020 tokens.
  // A subagent's: 20000 * 6 + 80 = 120080 chars = 30020 tokens.
  EXPECT_EQ(EstimateFloorTokens(shape), 10096 + 2 * 150020 + 30020);
  shape.compaction_tokens = 5000;
  EXPECT_EQ(EstimateFloorTokens(shape), 10096 + 2 * 150020 + 30020 + 5000);
}

TEST(EstimateTest, FloorWithAnAnswerReserveCountsItPerChild) {
  FloorShape shape;
  shape.last_reservation = 10000;
  shape.current_input_tokens = 6000;
  shape.output_limit = 4096;
  shape.pending_subagent_results = 3;
  shape.empty_result_message_chars = 80;
  shape.answer_reserve_tokens = 2000;
  EXPECT_EQ(EstimateFloorTokens(shape), 10096 + 3 * 2000);
  // The control: without it, each child counts at its worst case.
  shape.answer_reserve_tokens = 0;
  EXPECT_EQ(EstimateFloorTokens(shape), 10096 + 3 * 30020);
}

TEST(EstimateTest, TheAnswerReserveIsATenthOfTheCapSharedWithinBounds) {
  EXPECT_EQ(AnswerReserveTokens(60000, 3), 2000);
  EXPECT_EQ(AnswerReserveTokens(200000, 8), 2500);
  // Never below a useful answer, never above the 20 000-character cap.
  EXPECT_EQ(AnswerReserveTokens(30000, 8), kMinAnswerTokens);
  EXPECT_EQ(AnswerReserveTokens(200000, 1), kMaxAnswerTokens);
  EXPECT_EQ(AnswerReserveTokens(0, 0), kMinAnswerTokens);
  EXPECT_GE(kMaxAnswerTokens * kCharsPerToken, kSubagentResultCapChars);
}

TEST(EstimateTest, CompactionReservesTheLargerInputPlusItsSummary) {
  EXPECT_EQ(EstimateCompactionTokens(30000, 80000), 30000 + 4096);
  EXPECT_EQ(EstimateCompactionTokens(10000, 80001), 20001 + 4096);
}

TEST(EstimateTest, OnlyACompleteUsageCounts) {
  EXPECT_EQ(ReportedTokens({10, 20, std::nullopt, std::nullopt}), 30);
  EXPECT_EQ(ReportedTokens({10, 20, 5, 1}), 36);
  EXPECT_EQ(ReportedTokens({10, std::nullopt, std::nullopt, std::nullopt}),
            std::nullopt);                      // partial
  EXPECT_EQ(ReportedTokens({}), std::nullopt);  // missing
  EXPECT_EQ(ReportedTokens({-1, 20, std::nullopt, std::nullopt}),
            std::nullopt);  // invalid
}

class MeterTest : public ::testing::Test {
 protected:
  void Start(int64_t limit) {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "meterXXXXXX");
    home_ = ::mkdtemp(templ.data());
    path_ = BudgetJournalFile(*GarudaSessionFolder(home_, "s"));
    auto ledger = JournaledLedger::Open({path_, limit});
    ASSERT_TRUE(ledger.ok()) << ledger.status();
    ledger_ = std::move(*ledger);
    auto pair = ipc::MakeSocketPair();
    ASSERT_TRUE(pair.ok());
    server_ = std::make_unique<BudgetServer>(ledger_.get());
    thread_ = std::thread([this, fd = pair->first.Release()]() mutable {
      served_ = server_->Serve(ipc::Channel(UniqueFd(fd)));
    });
    top_ =
        std::make_unique<BudgetClient>(ipc::Channel(std::move(pair->second)));
  }
  // Hangs up the top agent and waits for the server to end.
  void Stop() {
    top_.reset();
    if (thread_.joinable()) thread_.join();
  }
  void TearDown() override { Stop(); }

  std::unique_ptr<BudgetClient> Child(BudgetClient& parent, int64_t limit,
                                      int64_t expected_lease,
                                      uint32_t* id = nullptr) {
    auto child = parent.OpenChild(limit, "task");
    EXPECT_TRUE(child.ok()) << child.status();
    EXPECT_TRUE(child->opened.granted());
    EXPECT_EQ(child->opened.lease(), expected_lease);
    if (id) *id = child->opened.child();
    return std::make_unique<BudgetClient>(
        ipc::Channel(std::move(child->channel)));
  }

  std::string home_, path_;
  std::unique_ptr<JournaledLedger> ledger_;
  std::unique_ptr<BudgetServer> server_;
  std::thread thread_;
  absl::Status served_;
  std::unique_ptr<BudgetClient> top_;
};

TEST_F(MeterTest, ReserveAndSettleOverTheChannel) {
  Start(10000);
  Meter meter(top_.get());
  auto call = meter.Begin(3000, "turn", "r1");
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_TRUE(call->open());
  ASSERT_TRUE(call->Settle({1000, 200, std::nullopt, std::nullopt}).ok());
  EXPECT_FALSE(call->open());
  auto status = top_->Status();
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->spent(), 1200);
  EXPECT_EQ(status->left(), 8800);
  Stop();
  EXPECT_TRUE(served_.ok()) << served_;
  // The journal has it: the settle (it lowered the charge, so it waited for
  // a later write) was written when the server ended.
  EXPECT_FALSE(ledger_->flush_pending());
  auto replay = ReadJournal(path_);
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(replay->ledger.Status().spent(), 1200);
}

TEST_F(MeterTest, RefusedRequestMustNotBeSent) {
  Start(1000);
  Meter meter(top_.get());
  auto call = meter.Begin(1500, "turn", "big");
  ASSERT_FALSE(call.ok());
  EXPECT_EQ(call.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StartsWith(call.status().message(), "token_budget"))
      << call.status();
  EXPECT_TRUE(absl::StrContains(call.status().message(), "1000 left"));
}

TEST_F(MeterTest, FailureWithoutUsageKeepsTheReservation) {
  Start(10000);
  Meter meter(top_.get());
  {
    auto failed = meter.Begin(3000, "turn", "a");
    ASSERT_TRUE(failed->SettleUnreported().ok());
    auto partial = meter.Begin(1000, "turn", "b");
    // Partial usage (no output count) is not a report.
    ASSERT_TRUE(
        partial->Settle({500, std::nullopt, std::nullopt, std::nullopt}).ok());
    auto cut_off = meter.Begin(2000, "turn", "c");
    // A stream cut off after reporting its usage settles to it.
    ASSERT_TRUE(cut_off->Settle({300, 50, std::nullopt, std::nullopt}).ok());
  }
  auto status = top_->Status();
  EXPECT_EQ(status->spent(), 3000 + 1000 + 350);
  EXPECT_EQ(status->agents(0).unreported(), 4000);
}

TEST_F(MeterTest, CancelAndDestroyKeepTheReservation) {
  Start(10000);
  Meter meter(top_.get());
  {
    auto cancelled = meter.Begin(2000, "turn", "a");
    ASSERT_TRUE(cancelled->Cancel().ok());
    auto dropped = meter.Begin(1500, "turn", "b");
    // Goes out of scope unsettled: cancelled.
  }
  EXPECT_EQ(top_->Status()->spent(), 3500);
  EXPECT_EQ(top_->Status()->reserved(), 0);
}

TEST_F(MeterTest, RetryReservesAgain) {
  Start(10000);
  Meter meter(top_.get());
  auto call = meter.Begin(4000, "turn", "a");
  uint64_t first = call->reservation();
  // First attempt failed with no usage: kept; the retry reserves anew.
  ASSERT_TRUE(call->Retry().ok());
  EXPECT_NE(call->reservation(), first);
  EXPECT_EQ(top_->Status()->spent(), 4000);
  EXPECT_EQ(top_->Status()->reserved(), 4000);
  // The third attempt does not fit: 8000 spent, 4000 more asked.
  absl::Status third = call->Retry();
  EXPECT_EQ(third.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StartsWith(third.message(), "token_budget")) << third;
  EXPECT_FALSE(call->open());
  EXPECT_EQ(top_->Status()->spent(), 8000);
}

TEST_F(MeterTest, RetryAfterAReportedFailureSettlesToTheReport) {
  Start(10000);
  Meter meter(top_.get());
  auto call = meter.Begin(4000, "turn", "a");
  ASSERT_TRUE(call->Retry({100, 0, std::nullopt, std::nullopt}).ok());
  EXPECT_EQ(top_->Status()->spent(), 100);
  EXPECT_EQ(top_->Status()->reserved(), 4000);
}

TEST_F(MeterTest, ChildrenShareTheParentsBudget) {
  Start(10000);
  ASSERT_TRUE(top_->SetFloor(2000).ok());
  uint32_t a_id = 0;
  auto a = Child(*top_, 6000, 6000, &a_id);
  auto b = Child(*top_, 6000, 2000);  // 10000 - 2000 floor - 6000
  EXPECT_FALSE(top_->OpenChild(10, "c")->opened.granted());
  Meter meter_a(a.get()), meter_b(b.get());
  auto call = meter_b.Begin(2001, "turn", "b1");
  EXPECT_EQ(call.status().code(), absl::StatusCode::kResourceExhausted);
  auto used = meter_a.Begin(1000, "turn", "a1");
  ASSERT_TRUE(used->Settle({400, 100, std::nullopt, std::nullopt}).ok());
  ChildReport report;
  report.set_reported_tokens(500);
  auto closed = top_->CloseChild(a_id, report);
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(closed->charged(), 500);
  EXPECT_EQ(closed->returned(), 5500);
  // The closed child's channel answers with an error, not a grant.
  auto late = meter_a.Begin(1, "turn", "a2");
  EXPECT_EQ(late.status().code(), absl::StatusCode::kFailedPrecondition);
  // The parent's final answer fits in its floor and what returned.
  Meter meter(top_.get());
  EXPECT_TRUE(meter.Begin(7500, "final", "f").ok());
}

TEST_F(MeterTest, DeadBudgeterIsNoticedAtOnceAndForGood) {
  Start(10000);
  auto child = Child(*top_, 1000, 1000);
  Stop();  // the budgeter ends: every channel it served closes
  Meter meter(child.get());
  auto call = meter.Begin(10, "turn", "x");
  EXPECT_EQ(call.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(call.status().message(), "unmetered"));
  EXPECT_EQ(child->health().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(meter.Begin(10, "turn", "y").status().code(),
            absl::StatusCode::kUnavailable);
}

TEST_F(MeterTest, ChildBreakingTheProtocolEndsOnlyItsChannel) {
  Start(10000);
  auto child = top_->OpenChild(1000, "bad");
  ASSERT_TRUE(child.ok());
  ipc::Channel raw(std::move(child->channel));
  BudgetRequest request;
  request.set_seq(7);  // seq 1 expected
  request.mutable_status();
  ASSERT_TRUE(raw.Send(request).ok());
  BudgetReply reply;
  ASSERT_TRUE(raw.Receive(&reply).ok());
  EXPECT_TRUE(reply.has_error());
  EXPECT_FALSE(raw.Receive(&reply).ok());  // closed
  // The parent goes on.
  EXPECT_TRUE(top_->Status().ok());
}

TEST_F(MeterTest, ChildStallingInAFrameIsCutOffAndOthersGoOn) {
  Start(10000);
  auto child = top_->OpenChild(1000, "stall");
  ASSERT_TRUE(child.ok());
  // Two bytes of a four-byte length, then nothing: the budgeter's read of
  // this frame runs out after its receive timeout and ends the channel.
  ASSERT_EQ(::write(child->channel.get(), "\x10\x00", 2), 2);
  // The parent is answered (once the stalled read gave up).
  auto status = top_->Status();
  ASSERT_TRUE(status.ok()) << status.status();
  // Cut off, told why first (an Error reply, as for any broken frame).
  ipc::Channel raw(std::move(child->channel));
  BudgetReply reply;
  ASSERT_TRUE(raw.Receive(&reply).ok());
  EXPECT_TRUE(reply.has_error());
  EXPECT_FALSE(raw.Receive(&reply).ok());  // closed
  EXPECT_TRUE(top_->Reserve(10, "turn", "after").ok());
}

// The budgeter reads ahead on a child's channel: a child that sends its next
// request before reading the answer finds it read ahead, and the server
// answers it without waiting for more bytes on the socket.
TEST_F(MeterTest, RequestsSentTogetherAreAllAnswered) {
  Start(10000);
  auto child = top_->OpenChild(1000, "eager");
  ASSERT_TRUE(child.ok());
  // A server that missed the second request would leave this read waiting.
  struct timeval timeout = {20, 0};
  ASSERT_EQ(::setsockopt(child->channel.get(), SOL_SOCKET, SO_RCVTIMEO,
                         &timeout, sizeof(timeout)),
            0);
  ipc::Channel raw(std::move(child->channel));
  for (uint64_t seq : {1, 2, 3}) {
    BudgetRequest request;
    request.set_seq(seq);
    request.mutable_reserve()->set_tokens(100);
    ASSERT_TRUE(raw.Send(request).ok());
  }
  for (uint64_t seq : {1, 2, 3}) {
    BudgetReply reply;
    absl::Status received = raw.Receive(&reply);
    ASSERT_TRUE(received.ok()) << received;
    EXPECT_EQ(reply.seq(), seq);
    EXPECT_TRUE(reply.reserved().granted());
  }
}

TEST_F(MeterTest, RejectsOversizedLabels) {
  Start(10000);
  auto reserved = top_->Reserve(1, std::string(300, 'x'), "id");
  EXPECT_EQ(reserved.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(top_->health().ok());
}

}  // namespace
}  // namespace budget
}  // namespace garuda
