#include "lib/budget/ledger.h"

#include <cstdio>
#include <map>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace garuda {
namespace budget {
namespace {

// Grants `tokens` to `agent` or fails the test.
uint64_t Grant(Ledger& ledger, AgentId agent, int64_t tokens) {
  auto result = ledger.Reserve(agent, tokens);
  EXPECT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->granted)
      << "agent " << agent << " asked " << tokens << ", left " << result->left;
  return result->reservation;
}

AgentId Child(Ledger& ledger, AgentId parent, int64_t limit,
              int64_t expected_lease) {
  auto result = ledger.OpenChild(
      parent, limit, "report-" + std::to_string(ledger.next_agent()));
  EXPECT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->granted);
  EXPECT_EQ(result->lease, expected_lease);
  return result->child;
}

void ExpectBalanced(const Ledger& ledger) {
  BudgetStatus status = ledger.Status();
  EXPECT_EQ(
      status.spent() + status.reserved() + status.leased() + status.left(),
      status.limit());
  EXPECT_EQ(ledger.SettledPlusOutstanding(),
            status.spent() + status.reserved());
}

TEST(LedgerTest, ExtendChildAddsAllOrNothingAboveTheFloor) {
  Ledger ledger(10000);
  const AgentId child = Child(ledger, kTopAgent, 4000, 4000);
  ASSERT_TRUE(ledger.SetFloor(kTopAgent, 3000).ok());
  // 10000 - 4000 - 3000: 3000 above the floor.
  auto too_much = ledger.ExtendChild(kTopAgent, child, 3001);
  ASSERT_TRUE(too_much.ok()) << too_much.status();
  EXPECT_FALSE(too_much->granted);  // not even a part of it
  EXPECT_EQ(too_much->lease, 4000);
  EXPECT_EQ(ledger.Left(kTopAgent), 6000);
  auto more = ledger.ExtendChild(kTopAgent, child, 2500);
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_TRUE(more->granted);
  EXPECT_EQ(more->lease, 6500);
  EXPECT_EQ(more->left, 3500);
  // The child can reserve it; the parent keeps its floor.
  Grant(ledger, child, 6500);
  EXPECT_EQ(ledger.Left(kTopAgent), 3500);
  ExpectBalanced(ledger);
  // Only the parent of an open child may extend it.
  EXPECT_FALSE(ledger.ExtendChild(child, kTopAgent, 1).ok());
  EXPECT_FALSE(ledger.ExtendChild(kTopAgent, 99, 1).ok());
  EXPECT_FALSE(ledger.ExtendChild(kTopAgent, child, 0).ok());
}

TEST(LedgerTest, ReservesWhatFitsAndRefusesTheRest) {
  Ledger ledger(1000);
  uint64_t first = Grant(ledger, kTopAgent, 600);
  EXPECT_EQ(first, 1u);
  auto refused = ledger.Reserve(kTopAgent, 500);
  ASSERT_TRUE(refused.ok());
  EXPECT_FALSE(refused->granted);
  EXPECT_EQ(refused->reservation, 0u);
  EXPECT_EQ(refused->left, 400);
  EXPECT_TRUE(Grant(ledger, kTopAgent, 400));
  EXPECT_EQ(ledger.Left(kTopAgent), 0);
  EXPECT_EQ(ledger.Status().agents(0).refused(), 1);
  ExpectBalanced(ledger);
}

TEST(LedgerTest, ReportedUsageSettlesAndReturnsTheRest) {
  Ledger ledger(1000);
  uint64_t id = Grant(ledger, kTopAgent, 600);
  auto settled = ledger.Settle(kTopAgent, id, 250, true);
  ASSERT_TRUE(settled.ok()) << settled.status();
  EXPECT_EQ(settled->charged, 250);
  EXPECT_EQ(settled->left, 750);
  EXPECT_EQ(ledger.Status().spent(), 250);
  EXPECT_EQ(ledger.Status().agents(0).unreported(), 0);
  ExpectBalanced(ledger);
}

TEST(LedgerTest, FailedRequestWithoutUsageKeepsItsReservation) {
  Ledger ledger(1000);
  uint64_t id = Grant(ledger, kTopAgent, 600);
  // The request failed (timeout, 500, cancel) and the provider reported
  // nothing: `used` is ignored, the whole reservation stays charged.
  auto settled = ledger.Settle(kTopAgent, id, 10, false);
  ASSERT_TRUE(settled.ok());
  EXPECT_EQ(settled->charged, 600);
  EXPECT_EQ(settled->left, 400);
  EXPECT_EQ(ledger.Status().agents(0).unreported(), 600);
  // Negative control: the same failure with a reported usage settles to it.
  uint64_t second = Grant(ledger, kTopAgent, 300);
  auto reported = ledger.Settle(kTopAgent, second, 120, true);
  ASSERT_TRUE(reported.ok());
  EXPECT_EQ(reported->charged, 120);
  EXPECT_EQ(ledger.Status().spent(), 720);
  ExpectBalanced(ledger);
}

TEST(LedgerTest, SettleOnlyOnceAndOnlyByItsAgent) {
  Ledger ledger(1000);
  AgentId child = Child(ledger, kTopAgent, 500, 500);
  uint64_t id = Grant(ledger, child, 100);
  EXPECT_EQ(ledger.Settle(kTopAgent, id, 1, true).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(ledger.Settle(child, id, 1, true).ok());
  EXPECT_EQ(ledger.Settle(child, id, 1, true).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ledger.Settle(child, 999, 1, true).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(LedgerTest, RejectsBadNumbers) {
  Ledger ledger(1000);
  EXPECT_EQ(ledger.Reserve(kTopAgent, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger.Reserve(kTopAgent, -5).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger.Reserve(kTopAgent, kMaxTokens + 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  uint64_t id = Grant(ledger, kTopAgent, 10);
  EXPECT_EQ(ledger.Settle(kTopAgent, id, -1, true).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger.OpenChild(kTopAgent, 0, "x").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger.SetFloor(kTopAgent, -1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ledger.Reserve(7, 1).status().code(), absl::StatusCode::kNotFound);
}

TEST(LedgerTest, ReportAboveTheReservationIsAnOverrunAndStopsGrants) {
  Ledger ledger(1000);
  uint64_t id = Grant(ledger, kTopAgent, 900);
  // The provider counted more input than the estimate: the truth is charged.
  auto settled = ledger.Settle(kTopAgent, id, 1100, true);
  ASSERT_TRUE(settled.ok());
  EXPECT_EQ(settled->charged, 1100);
  EXPECT_EQ(settled->left, 0);
  EXPECT_EQ(ledger.Status().agents(0).overrun(), 200);
  EXPECT_FALSE(ledger.Reserve(kTopAgent, 1)->granted);
}

TEST(LedgerTest, ChildLeaseIsTheSmallerOfItsLimitAndWhatIsLeft) {
  Ledger ledger(1000);
  Grant(ledger, kTopAgent, 100);
  ASSERT_TRUE(ledger.SetFloor(kTopAgent, 200).ok());
  // left 900 - floor 200 = 700.
  AgentId a = Child(ledger, kTopAgent, 150000, 700);
  auto refused = ledger.OpenChild(kTopAgent, 10, "b");
  ASSERT_TRUE(refused.ok());
  EXPECT_FALSE(refused->granted);  // the open sibling lease holds the rest
  ASSERT_TRUE(ledger.SetFloor(kTopAgent, 0).ok());
  Child(ledger, kTopAgent, 150000, 200);
  EXPECT_EQ(ledger.Left(a), 700);
  ExpectBalanced(ledger);
}

TEST(LedgerTest, ChildCannotReservePastItsLease) {
  Ledger ledger(1000);
  AgentId child = Child(ledger, kTopAgent, 300, 300);
  Grant(ledger, child, 200);
  EXPECT_FALSE(ledger.Reserve(child, 101)->granted);
  Grant(ledger, child, 100);
  // The parent cannot take the child's lease either.
  EXPECT_FALSE(ledger.Reserve(kTopAgent, 701)->granted);
  Grant(ledger, kTopAgent, 700);
  ExpectBalanced(ledger);
}

TEST(LedgerTest, ChildThatStopsEarlyReturnsItsUnusedTokens) {
  Ledger ledger(1000);
  AgentId child = Child(ledger, kTopAgent, 600, 600);
  uint64_t id = Grant(ledger, child, 200);
  ASSERT_TRUE(ledger.Settle(child, id, 150, true).ok());
  EXPECT_EQ(ledger.Left(kTopAgent), 400);
  auto closed = ledger.CloseChild(kTopAgent, child, 150);
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(closed->charged, 150);
  EXPECT_EQ(closed->returned, 450);
  EXPECT_EQ(closed->left, 850);
  EXPECT_FALSE(ledger.IsOpen(child));
  EXPECT_EQ(ledger.Reserve(child, 1).status().code(),
            absl::StatusCode::kFailedPrecondition);
  ExpectBalanced(ledger);
}

TEST(LedgerTest, CancelledChildKeepsItsOpenReservationAsSpent) {
  Ledger ledger(1000);
  AgentId child = Child(ledger, kTopAgent, 600, 600);
  uint64_t settled = Grant(ledger, child, 100);
  ASSERT_TRUE(ledger.Settle(child, settled, 50, true).ok());
  Grant(ledger, child, 300);  // in flight when the child is cancelled
  auto closed = ledger.CloseChild(kTopAgent, child, 0);
  ASSERT_TRUE(closed.ok());
  EXPECT_EQ(closed->charged, 350);
  EXPECT_EQ(closed->returned, 250);
  EXPECT_EQ(ledger.Left(kTopAgent), 650);
  EXPECT_EQ(ledger.Status().agents(1).unreported(), 300);
  ExpectBalanced(ledger);
}

TEST(LedgerTest, ReportReplacesOnlyTheAmountItCovers) {
  Ledger ledger(1000);
  AgentId child = Child(ledger, kTopAgent, 500, 500);
  uint64_t id = Grant(ledger, child, 200);
  ASSERT_TRUE(ledger.Settle(child, id, 200, true).ok());
  // A partial report (it covers 80 of the 200 counted) does not lower the
  // charge; a report above what was counted raises it.
  EXPECT_EQ(ledger.CloseChild(kTopAgent, child, 80)->charged, 200);
  AgentId second = Child(ledger, kTopAgent, 300, 300);
  EXPECT_EQ(ledger.CloseChild(kTopAgent, second, 120)->charged, 120);
  EXPECT_EQ(ledger.Status().spent(), 320);
  ExpectBalanced(ledger);
}

TEST(LedgerTest, ParentGetsItsFinalAnswerWhenChildrenUseTheRest) {
  Ledger ledger(10000);
  ASSERT_TRUE(ledger.SetFloor(kTopAgent, 3000).ok());
  std::vector<AgentId> children;
  for (int i = 0; i < 5; ++i) {
    auto opened = ledger.OpenChild(kTopAgent, 150000, "c");
    ASSERT_TRUE(opened.ok());
    if (!opened->granted) break;
    children.push_back(opened->child);
    // Each child spends all it can.
    while (true) {
      auto result = ledger.Reserve(opened->child, 500);
      if (!result->granted) break;
    }
  }
  ASSERT_EQ(children.size(), 1u);  // the first took all but the floor
  EXPECT_EQ(ledger.Left(kTopAgent), 3000);
  Grant(ledger, kTopAgent, 3000);  // the final answer
  // Negative control: without the floor the child takes everything.
  Ledger no_floor(10000);
  auto opened = no_floor.OpenChild(kTopAgent, 150000, "c");
  while (no_floor.Reserve(opened->child, 500)->granted) {
  }
  EXPECT_FALSE(no_floor.Reserve(kTopAgent, 3000)->granted);
}

TEST(LedgerTest, ClosingAChildClosesItsChildrenFirst) {
  Ledger ledger(1000);
  AgentId child = Child(ledger, kTopAgent, 600, 600);
  AgentId grandchild = Child(ledger, child, 400, 400);
  Grant(ledger, grandchild, 100);
  Grant(ledger, child, 50);
  EXPECT_EQ(ledger.OpenDescendants(kTopAgent),
            (std::vector<AgentId>{grandchild, child}));
  auto closed = ledger.CloseChild(kTopAgent, child, 0);
  ASSERT_TRUE(closed.ok());
  EXPECT_EQ(closed->charged, 150);
  EXPECT_FALSE(ledger.IsOpen(grandchild));
  EXPECT_EQ(ledger.Left(kTopAgent), 850);
  EXPECT_TRUE(ledger.OpenReservations().empty());
  ExpectBalanced(ledger);
}

TEST(LedgerTest, OnlyTheParentClosesItsChild) {
  Ledger ledger(1000);
  AgentId a = Child(ledger, kTopAgent, 300, 300);
  AgentId b = Child(ledger, kTopAgent, 300, 300);
  EXPECT_FALSE(ledger.CloseChild(a, b, 0).ok());
  EXPECT_FALSE(ledger.CloseChild(kTopAgent, kTopAgent, 0).ok());
  ASSERT_TRUE(ledger.CloseChild(kTopAgent, b, 0).ok());
  EXPECT_FALSE(ledger.CloseChild(kTopAgent, b, 0).ok());
}

TEST(LedgerTest, RestartNeedsNothingOpen) {
  Ledger ledger(1000);
  uint64_t id = Grant(ledger, kTopAgent, 100);
  EXPECT_FALSE(ledger.Restart(2000).ok());
  ASSERT_TRUE(ledger.Settle(kTopAgent, id, 100, true).ok());
  ASSERT_TRUE(ledger.Restart(2000).ok());
  EXPECT_EQ(ledger.Left(kTopAgent), 1900);
}

// The property: many agents reserving, settling, opening and closing children
// in random (seeded) interleavings; after every step settled plus outstanding
// stays within the limit. Counted twice: by the ledger's own per-agent sums,
// and by the test's own record of what it was granted and charged.
struct Model {
  std::map<uint64_t, std::pair<AgentId, int64_t>> open;  // id -> agent, tokens
  std::map<AgentId, int64_t> charged;  // settled charges per agent
  std::map<AgentId, AgentId> parent;
  std::map<AgentId, int64_t> close_extra;  // report above what was counted
  std::map<AgentId, int64_t> lease;
  std::vector<AgentId> live{kTopAgent};
  int64_t Total() const {
    int64_t total = 0;
    for (const auto& [id, entry] : open) total += entry.second;
    for (const auto& [agent, tokens] : charged) total += tokens;
    for (const auto& [agent, tokens] : close_extra) total += tokens;
    return total;
  }
};

// Runs `steps` random operations on a ledger; `separate_budgets` is the
// negative control: each child gets its own ledger of its limit (the old
// design), so nothing ties it to what the parent has left.
// How often each kind of step did something, over all runs: a property test
// that never opened or closed a child would prove little.
struct Coverage {
  int grants = 0, refusals = 0, settles = 0, opens = 0, closes = 0, floors = 0;
  int extends = 0;
};

void RunRandom(uint32_t seed, int steps, int64_t limit, bool separate_budgets,
               bool* passed_limit, Coverage* coverage) {
  std::mt19937 random(seed);
  auto pick = [&](int n) {
    return std::uniform_int_distribution<int>(0, n - 1)(random);
  };
  Ledger ledger(limit);
  std::map<AgentId, std::unique_ptr<Ledger>> own;  // negative control only
  Model model;
  *passed_limit = false;
  for (int step = 0; step < steps; ++step) {
    AgentId agent = model.live[pick(model.live.size())];
    Ledger& target =
        separate_budgets && agent != kTopAgent ? *own[agent] : ledger;
    AgentId as = separate_budgets && agent != kTopAgent ? kTopAgent : agent;
    switch (pick(7)) {
      case 0:
      case 1: {
        int64_t tokens = 1 + pick(limit / 10);
        auto result = target.Reserve(as, tokens);
        ASSERT_TRUE(result.ok()) << result.status();
        ++(result->granted ? coverage->grants : coverage->refusals);
        if (result->granted) {
          // Reservation ids are per ledger; key the model by (ledger, id).
          uint64_t key = (uint64_t{agent} << 40) | result->reservation;
          model.open[key] = {agent, tokens};
        }
        break;
      }
      case 2: {
        std::vector<uint64_t> mine;
        for (const auto& [key, entry] : model.open) {
          if (entry.first == agent) mine.push_back(key);
        }
        if (mine.empty()) break;
        uint64_t key = mine[pick(mine.size())];
        int64_t tokens = model.open[key].second;
        bool reported = pick(3) != 0;
        int64_t used = pick(tokens + 1);
        auto result =
            target.Settle(as, key & ((uint64_t{1} << 40) - 1), used, reported);
        ASSERT_TRUE(result.ok()) << result.status();
        ASSERT_EQ(result->charged, reported ? used : tokens);
        model.charged[agent] += result->charged;
        model.open.erase(key);
        ++coverage->settles;
        break;
      }
      case 3: {
        if (model.live.size() > 60) break;
        int64_t child_limit = 1 + pick(limit);
        auto result = ledger.OpenChild(agent, child_limit, "r");
        ASSERT_TRUE(result.ok()) << result.status();
        if (!result->granted) break;
        ASSERT_LE(result->lease, child_limit);
        model.parent[result->child] = agent;
        model.lease[result->child] = result->lease;
        ++coverage->opens;
        model.live.push_back(result->child);
        if (separate_budgets) {
          own[result->child] = std::make_unique<Ledger>(child_limit);
        }
        break;
      }
      case 4: {
        // The agent closes one of its open children with a random report.
        std::vector<AgentId> kids;
        for (AgentId id : model.live) {
          if (id != kTopAgent && model.parent[id] == agent) kids.push_back(id);
        }
        if (kids.empty() || separate_budgets) break;
        AgentId child = kids[pick(kids.size())];
        std::vector<AgentId> subtree = ledger.OpenDescendants(child);
        subtree.push_back(child);
        int64_t counted = 0;
        for (AgentId id : subtree) {
          for (auto it = model.open.begin(); it != model.open.end();) {
            if (it->second.first == id) {
              model.charged[id] += it->second.second;  // kept as spent
              it = model.open.erase(it);
            } else {
              ++it;
            }
          }
        }
        // What the ledger counted for the child: its whole subtree, with
        // the children it closed earlier.
        std::vector<AgentId> everyone{child};
        for (size_t i = 0; i < everyone.size(); ++i) {
          for (const auto& [id, up] : model.parent) {
            if (up == everyone[i] && id != kTopAgent) everyone.push_back(id);
          }
        }
        for (AgentId id : everyone) {
          counted += model.charged[id] + model.close_extra[id];
        }
        // A report up to the lease (above it the provider billed more than
        // was reserved: an overrun, tested on its own).
        int64_t report = pick(2)
                             ? pick(counted + 1)
                             : std::max(counted, std::min(counted + pick(50),
                                                          model.lease[child]));
        auto result = ledger.CloseChild(agent, child, report);
        ASSERT_TRUE(result.ok()) << result.status();
        if (report > counted) model.close_extra[child] += report - counted;
        ++coverage->closes;
        for (AgentId id : subtree) {
          model.live.erase(std::find(model.live.begin(), model.live.end(), id));
        }
        break;
      }
      case 5:
        if (!separate_budgets) {
          ASSERT_TRUE(ledger.SetFloor(agent, pick(limit / 3)).ok());
          ++coverage->floors;
        }
        break;
      case 6: {
        // The agent gives one of its open children more lease.
        std::vector<AgentId> kids;
        for (AgentId id : model.live) {
          if (id != kTopAgent && model.parent[id] == agent) kids.push_back(id);
        }
        if (kids.empty() || separate_budgets) break;
        AgentId child = kids[pick(kids.size())];
        int64_t tokens = 1 + pick(limit / 5);
        auto result = ledger.ExtendChild(agent, child, tokens);
        ASSERT_TRUE(result.ok()) << result.status();
        if (!result->granted) break;
        model.lease[child] += tokens;
        ASSERT_EQ(result->lease, model.lease[child]);
        ++coverage->extends;
        break;
      }
    }
    int64_t total = model.Total();
    if (total > limit) *passed_limit = true;
    if (!separate_budgets) {
      // The ledger's own count agrees with the test's, and never passes.
      ASSERT_EQ(ledger.SettledPlusOutstanding(), total) << "step " << step;
      ASSERT_LE(total, limit) << "seed " << seed << " step " << step;
      BudgetStatus status = ledger.Status();
      ASSERT_EQ(
          status.spent() + status.reserved() + status.leased() + status.left(),
          limit)
          << "seed " << seed << " step " << step;
    }
  }
}

TEST(LedgerPropertyTest, RandomInterleavingsNeverPassTheLimit) {
  Coverage coverage;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    bool passed = false;
    RunRandom(seed, 400, 5000, false, &passed, &coverage);
    if (HasFatalFailure()) return;
    EXPECT_FALSE(passed) << "seed " << seed;
  }
  EXPECT_GT(coverage.grants, 3000);
  EXPECT_GT(coverage.refusals, 1000);
  EXPECT_GT(coverage.settles, 2000);
  EXPECT_GT(coverage.opens, 1000);
  EXPECT_GT(coverage.closes, 500);
  EXPECT_GT(coverage.floors, 1000);
  EXPECT_GT(coverage.extends, 200);
  std::printf("grants %d refusals %d settles %d opens %d closes %d floors %d\n",
              coverage.grants, coverage.refusals, coverage.settles,
              coverage.opens, coverage.closes, coverage.floors);
}

TEST(LedgerPropertyTest, NegativeControlSeparateBudgetsPassTheLimit) {
  int passed_runs = 0;
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    bool passed = false;
    Coverage coverage;
    RunRandom(seed, 400, 5000, true, &passed, &coverage);
    if (HasFatalFailure()) return;
    passed_runs += passed;
  }
  EXPECT_GT(passed_runs, 0);
}

TEST(LedgerOverflowTest, SaturatingAddHoldsTheRange) {
  EXPECT_EQ(SaturatingAdd(kMaxLedgerTokens, kMaxLedgerTokens),
            kMaxLedgerTokens);
  EXPECT_EQ(SaturatingAdd(-kMaxLedgerTokens, -kMaxLedgerTokens),
            -kMaxLedgerTokens);
  EXPECT_EQ(SaturatingAdd(5, -7), -2);
}

// Settled charges whose plain sum passes 2^63, in a top agent and in a
// child whose charges reach its parent.
TEST(LedgerOverflowTest, ChargesFarBeyondReservationsNeverWrap) {
  Ledger ledger(kMaxTokens);
  const AgentId child =
      Child(ledger, kTopAgent, kMaxTokens / 2, kMaxTokens / 2);
  std::vector<std::pair<AgentId, uint64_t>> open;
  for (int i = 0; i < 5000; ++i) {
    open.push_back({kTopAgent, Grant(ledger, kTopAgent, 1)});
    open.push_back({child, Grant(ledger, child, 1)});
  }
  int capped = 0;
  for (const auto& [agent, reservation] : open) {
    auto settled = ledger.Settle(agent, reservation, kMaxTokens, true);
    ASSERT_TRUE(settled.ok()) << settled.status();
    EXPECT_GT(settled->charged, 0);
    capped += settled->capped ? 1 : 0;
  }
  // The child's lease is half: its reports are capped at 1 + lease.
  EXPECT_EQ(capped, 5000);
  BudgetStatus status = ledger.Status();
  EXPECT_GT(status.spent(), 0);
  EXPECT_LE(status.spent(), kMaxLedgerTokens);
  EXPECT_EQ(status.left(), 0);
  EXPECT_GE(ledger.SettledPlusOutstanding(), 0);
  for (const AgentUsage& agent : status.agents()) {
    EXPECT_GE(agent.spent(), 0);
    EXPECT_GE(agent.overrun(), 0);
    EXPECT_GE(agent.children(), 0);
  }
  auto more = ledger.Reserve(kTopAgent, 1);
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(more->granted);
  auto child_more = ledger.Reserve(child, 1);
  ASSERT_TRUE(child_more.ok());
  EXPECT_FALSE(child_more->granted);
  // Closing the child with the largest report keeps every sum in range.
  auto closed = ledger.CloseChild(kTopAgent, child, kMaxTokens);
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_GT(closed->charged, 0);
  EXPECT_GT(ledger.Status().spent(), 0);
}

TEST(LedgerOverflowTest, AReportAtOrUnderTheCapIsChargedAsReported) {
  Ledger ledger(1000);
  uint64_t reservation = Grant(ledger, kTopAgent, 100);
  auto settled = ledger.Settle(kTopAgent, reservation, 1100, true);
  ASSERT_TRUE(settled.ok());
  EXPECT_EQ(settled->charged, 1100);  // reservation + lease: the cap itself
  EXPECT_FALSE(settled->capped);
  EXPECT_EQ(ledger.Status().spent(), 1100);
  EXPECT_EQ(ledger.Status().agents(0).capped(), 0);
}

TEST(LedgerOverflowTest, AReportAboveTheCapIsCountedInTheStatus) {
  Ledger ledger(1000);
  uint64_t reservation = Grant(ledger, kTopAgent, 100);
  auto settled = ledger.Settle(kTopAgent, reservation, 5000, true);
  ASSERT_TRUE(settled.ok());
  EXPECT_TRUE(settled->capped);
  EXPECT_EQ(settled->charged, 1100);
  const AgentUsage row = ledger.Status().agents(0);
  EXPECT_EQ(row.capped(), 1);
  EXPECT_EQ(row.capped_tokens(), 3900);
}

}  // namespace
}  // namespace budget
}  // namespace garuda
