// The spec's T9 tests against the real programs: garuda-budgeter serving a
// parent (this test) and child agents that are separate processes
// (child_agent), each test with its negative control.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/budget/journal.h"
#include "lib/budget/meter.h"
#include "lib/ipc/frame_header.h"
#include "lib/ipc/helper_process.h"
#include "proto/budgeter_service.pb.h"

namespace garuda {
namespace budget {
namespace {

std::string Runfile(const std::string& path) {
  return JoinPath(
      JoinPath(std::getenv("TEST_SRCDIR"), std::getenv("TEST_WORKSPACE")),
      path);
}

std::string BudgeterPath() {
  return Runfile("cmd/garuda-budgeter/garuda-budgeter");
}

// A child agent process with its budget channel on fd 3, its stdin and
// stdout on pipes.
class ChildAgent {
 public:
  static std::unique_ptr<ChildAgent> Start(int budget_fd,
                                           std::vector<std::string> args) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
      return nullptr;
    }
    std::vector<std::string> argv = {Runfile("tests/budget/child_agent"),
                                     "--budget-fd=3"};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_t pid = ::fork();
    if (pid == 0) {
      // In the child: only async-signal-safe calls until exec.
      int high = ::fcntl(budget_fd, F_DUPFD, 10);
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::dup2(high, 3);
      std::vector<char*> raw;
      for (std::string& arg : argv) raw.push_back(arg.data());
      raw.push_back(nullptr);
      ::execv(raw[0], raw.data());
      ::_exit(127);
    }
    auto child = std::unique_ptr<ChildAgent>(new ChildAgent);
    child->pid_ = pid;
    ::close(in[0]);
    ::close(out[1]);
    child->stdin_ = UniqueFd(in[1]);
    child->stdout_ = UniqueFd(out[0]);
    return child;
  }
  ~ChildAgent() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  // The next line of its output (blocks until it comes or the child exits).
  std::string ReadLine() {
    std::string line;
    char byte;
    while (::read(stdout_.get(), &byte, 1) == 1 && byte != '\n') {
      line += byte;
    }
    return line;
  }
  void WriteLine() { (void)!::write(stdin_.get(), "\n", 1); }
  void Kill() { ::kill(pid_, SIGKILL); }
  // Waits for its exit; the exit code (128 + signal when killed).
  int Wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    stdin_.Reset();
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  // "granted G charged C refused R" -> the numbers.
  struct Result {
    int64_t granted = -1, charged = -1, refused = -1;
  };
  Result ReadResult() {
    Result result;
    std::vector<std::string> words = absl::StrSplit(ReadLine(), ' ');
    if (words.size() == 6) {
      (void)absl::SimpleAtoi(words[1], &result.granted);
      (void)absl::SimpleAtoi(words[3], &result.charged);
      (void)absl::SimpleAtoi(words[5], &result.refused);
    }
    return result;
  }

 private:
  pid_t pid_ = -1;
  UniqueFd stdin_, stdout_;
};

class BudgetProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "homeXXXXXX");
    home_ = ::mkdtemp(templ.data());
    ::setenv("HOME", home_.c_str(), 1);
  }

  std::unique_ptr<ipc::HelperProcess> StartBudgeter(const std::string& session,
                                                    int64_t limit) {
    ipc::HelperOptions options;
    options.argv = {BudgeterPath(), "serve", "--channel-fd=3",
                    "--session=" + session, absl::StrCat("--limit=", limit)};
    auto process = ipc::HelperProcess::Spawn(options);
    EXPECT_TRUE(process.ok()) << process.status();
    return process.ok() ? std::move(*process) : nullptr;
  }

  // Runs the real `garuda-budgeter status`; its stdout, and its exit code.
  std::string RunStatus(const std::string& session, bool json,
                        int* code = nullptr) {
    std::string command =
        absl::StrCat(BudgeterPath(), " status --session=", session,
                     json ? " --json" : "", " 2>&1");
    FILE* pipe = ::popen(command.c_str(), "r");
    std::string out;
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
      out.append(buffer, n);
    }
    int status = ::pclose(pipe);
    if (code) *code = WEXITSTATUS(status);
    return out;
  }

  BudgetStatus JournalStatus(const std::string& session) {
    auto replay =
        ReadJournal(BudgetJournalFile(*GarudaSessionFolder(home_, session)));
    EXPECT_TRUE(replay.ok()) << replay.status();
    return replay.ok() ? replay->ledger.Status() : BudgetStatus();
  }

  struct Spawned {
    uint32_t id;
    std::unique_ptr<ChildAgent> process;
  };

  // The parent opens `count` children of `child_limit` and starts each as a
  // process, all running at once. Refused children do not start.
  std::vector<Spawned> StartChildren(BudgetClient& parent, int count,
                                     int64_t child_limit,
                                     std::vector<std::string> args) {
    std::vector<Spawned> children;
    for (int i = 0; i < count; ++i) {
      auto child = parent.OpenChild(child_limit, absl::StrCat("child-", i));
      EXPECT_TRUE(child.ok()) << child.status();
      if (!child.ok() || !child->opened.granted()) continue;
      children.push_back({child->opened.child(),
                          ChildAgent::Start(child->channel.get(), args)});
      // child->channel closes here: only the child process holds it now.
    }
    return children;
  }

  // Waits for each child, closes it with its report; the sum they charged.
  int64_t FinishChildren(BudgetClient& parent, std::vector<Spawned>& children) {
    int64_t total = 0;
    for (Spawned& child : children) {
      ChildAgent::Result result = child.process->ReadResult();
      EXPECT_EQ(child.process->Wait(), 0);
      EXPECT_GE(result.charged, 0);
      total += result.charged;
      ChildReport report;
      report.set_reported_tokens(result.charged);
      auto closed = parent.CloseChild(child.id, report);
      EXPECT_TRUE(closed.ok()) << closed.status();
    }
    return total;
  }

  // The negative control: each child with a budgeter of its own (the old
  // design: a child's budget is its own limit, whatever the parent has left).
  int64_t SeparateBudgets(int count, int64_t child_limit,
                          std::vector<std::string> args) {
    std::vector<std::unique_ptr<ipc::HelperProcess>> budgeters;
    std::vector<std::unique_ptr<ChildAgent>> children;
    for (int i = 0; i < count; ++i) {
      budgeters.push_back(
          StartBudgeter(absl::StrCat("separate-", i), child_limit));
      children.push_back(
          ChildAgent::Start(budgeters.back()->channel().fd(), args));
    }
    int64_t total = 0;
    for (auto& child : children) {
      total += child->ReadResult().charged;
      EXPECT_EQ(child->Wait(), 0);
    }
    return total;
  }

  void ParallelChildrenStayInsideTheCap(int count, int64_t limit,
                                        int64_t child_limit, int64_t chunk) {
    auto budgeter = StartBudgeter("tree", limit);
    ASSERT_TRUE(budgeter);
    BudgetClient parent(budgeter.get());
    const std::vector<std::string> args = {"--mode=spend",
                                           absl::StrCat("--chunk=", chunk)};
    std::vector<Spawned> children =
        StartChildren(parent, count, child_limit, args);
    ASSERT_FALSE(children.empty());
    int64_t total = FinishChildren(parent, children);
    EXPECT_LE(total, limit);
    EXPECT_GT(total, limit / 2);  // they did spend: the cap is what held
    auto status = parent.Status();
    ASSERT_TRUE(status.ok());
    EXPECT_EQ(status->spent(), total);
    EXPECT_LE(status->spent() + status->reserved(), limit);
    EXPECT_TRUE(budgeter->Stop().ok());
    EXPECT_EQ(JournalStatus("tree").spent(), total);

    // Negative control: the same children with separate budgets pass it.
    int64_t separate = SeparateBudgets(count, child_limit, args);
    EXPECT_GT(separate, limit);
  }

  std::string home_;
};

TEST_F(BudgetProcessTest, ThreeParallelChildrenNeverPassTheCap) {
  ParallelChildrenStayInsideTheCap(3, 3000, 1500, 100);
}

TEST_F(BudgetProcessTest, FiftyParallelChildrenNeverPassTheCap) {
  ParallelChildrenStayInsideTheCap(50, 5000, 150, 50);
}

TEST_F(BudgetProcessTest, ChildThatStopsEarlyReturnsItsUnusedTokens) {
  auto budgeter = StartBudgeter("early", 10000);
  ASSERT_TRUE(budgeter);
  BudgetClient parent(budgeter.get());
  std::vector<Spawned> children = StartChildren(
      parent, 1, 6000, {"--mode=early", "--chunk=2000", "--used=700"});
  ASSERT_EQ(children.size(), 1u);
  EXPECT_EQ(parent.Status()->left(), 4000);  // the lease is held
  ChildAgent::Result result = children[0].process->ReadResult();
  EXPECT_EQ(children[0].process->Wait(), 0);
  EXPECT_EQ(result.charged, 700);
  ChildReport report;
  report.set_reported_tokens(700);
  auto closed = parent.CloseChild(children[0].id, report);
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(closed->charged(), 700);
  EXPECT_EQ(closed->returned(), 5300);
  EXPECT_EQ(closed->left(), 9300);
  // Negative control: while the child is open its lease is not usable.
  std::vector<Spawned> held = StartChildren(
      parent, 1, 6000, {"--mode=early", "--chunk=10", "--used=10"});
  EXPECT_EQ(parent.Status()->left(), 9300 - 6000);
  FinishChildren(parent, held);
}

TEST_F(BudgetProcessTest, ParentGetsItsFinalAnswerWhenChildrenUseTheRest) {
  FloorShape shape;
  shape.current_input_tokens = 1500;
  shape.output_limit = 500;
  const int64_t floor = EstimateFloorTokens(shape);
  ASSERT_EQ(floor, 2000);
  for (bool with_floor : {true, false}) {
    auto budgeter = StartBudgeter(with_floor ? "floor" : "nofloor", 10000);
    ASSERT_TRUE(budgeter);
    BudgetClient parent(budgeter.get());
    if (with_floor) ASSERT_TRUE(parent.SetFloor(floor).ok());
    std::vector<Spawned> children =
        StartChildren(parent, 3, 150000, {"--mode=spend", "--chunk=100"});
    FinishChildren(parent, children);
    Meter meter(&parent);
    auto final_answer = meter.Begin(floor, "final", "answer");
    if (with_floor) {
      EXPECT_TRUE(final_answer.ok()) << final_answer.status();
    } else {
      // Negative control: without the floor the children took it all.
      EXPECT_EQ(final_answer.status().code(),
                absl::StatusCode::kResourceExhausted);
    }
  }
}

TEST_F(BudgetProcessTest, FailedRequestKeepsItsReservationUnlessItReported) {
  auto budgeter = StartBudgeter("failures", 10000);
  ASSERT_TRUE(budgeter);
  BudgetClient parent(budgeter.get());
  std::vector<Spawned> failed =
      StartChildren(parent, 1, 3000, {"--mode=fail", "--chunk=900"});
  std::vector<Spawned> reported = StartChildren(
      parent, 1, 3000, {"--mode=fail_usage", "--chunk=900", "--used=120"});
  ASSERT_EQ(failed.size() + reported.size(), 2u);
  ChildAgent::Result no_usage = failed[0].process->ReadResult();
  ChildAgent::Result with_usage = reported[0].process->ReadResult();
  EXPECT_EQ(failed[0].process->Wait(), 0);
  EXPECT_EQ(reported[0].process->Wait(), 0);
  BudgetStatus status = *parent.Status();
  ASSERT_EQ(status.agents_size(), 3);
  EXPECT_EQ(status.agents(1).spent(), 900);  // no usage: all of it
  EXPECT_EQ(status.agents(1).unreported(), 900);
  EXPECT_EQ(status.agents(2).spent(), 120);  // its reported usage
  EXPECT_EQ(no_usage.charged, 900);
  EXPECT_EQ(with_usage.charged, 120);
  // A report of 0 for the failed child does not erase its charge.
  auto closed = parent.CloseChild(failed[0].id, ChildReport());
  EXPECT_EQ(closed->charged(), 900);
}

TEST_F(BudgetProcessTest, CancelledChildKeepsItsOpenReservationAsSpent) {
  auto budgeter = StartBudgeter("cancel", 10000);
  ASSERT_TRUE(budgeter);
  BudgetClient parent(budgeter.get());
  std::vector<Spawned> held =
      StartChildren(parent, 1, 5000, {"--mode=hold", "--chunk=1700"});
  ASSERT_EQ(held.size(), 1u);
  ASSERT_EQ(held[0].process->ReadLine(), "ready");  // its request is out
  held[0].process->Kill();                          // cancelled
  EXPECT_EQ(held[0].process->Wait(), 128 + SIGKILL);
  auto closed = parent.CloseChild(held[0].id, ChildReport());
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(closed->charged(), 1700);
  EXPECT_EQ(closed->returned(), 3300);
  // Negative control: a child that settled with a reported usage of 0 is
  // charged 0, so the 1700 above is the kept reservation.
  std::vector<Spawned> settled = StartChildren(
      parent, 1, 5000, {"--mode=early", "--chunk=1700", "--used=0"});
  settled[0].process->ReadResult();
  EXPECT_EQ(settled[0].process->Wait(), 0);
  EXPECT_EQ(parent.CloseChild(settled[0].id, ChildReport())->charged(), 0);
  EXPECT_EQ(JournalStatus("cancel").spent(), 1700);
}

TEST_F(BudgetProcessTest, KilledBudgeterIsNoticedByEveryClient) {
  auto budgeter = StartBudgeter("killed", 10000);
  ASSERT_TRUE(budgeter);
  BudgetClient parent(budgeter.get());
  std::vector<Spawned> children =
      StartChildren(parent, 2, 2000, {"--mode=wait", "--chunk=100"});
  ASSERT_EQ(children.size(), 2u);
  for (Spawned& child : children) {
    ASSERT_EQ(child.process->ReadLine(), "ready");  // metered while alive
  }
  ASSERT_EQ(::kill(budgeter->pid(), SIGKILL), 0);
  // The parent notices at its next call, with the cause.
  Meter meter(&parent);
  auto call = meter.Begin(10, "turn", "after-kill");
  EXPECT_EQ(call.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(call.status().message(), "signal 9"))
      << call.status();
  // Each child's next reservation fails too (exit 3), and nothing more was
  // granted to it.
  for (Spawned& child : children) {
    child.process->WriteLine();
    ChildAgent::Result result = child.process->ReadResult();
    EXPECT_EQ(child.process->Wait(), 3);
    EXPECT_EQ(result.granted, 100);
  }
}

TEST_F(BudgetProcessTest, ResumeReplaysTheJournal) {
  {
    auto budgeter = StartBudgeter("resume", 10000);
    ASSERT_TRUE(budgeter);
    BudgetClient parent(budgeter.get());
    Meter meter(&parent);
    auto settled = meter.Begin(3000, "turn", "a");
    ProviderUsage usage;
    usage.input_tokens = 2000;
    usage.output_tokens = 500;
    ASSERT_TRUE(settled->Settle(usage).ok());
    auto in_flight = meter.Begin(1000, "turn", "b");
    ASSERT_TRUE(in_flight.ok());
    std::vector<Spawned> held =
        StartChildren(parent, 1, 4000, {"--mode=hold", "--chunk=600"});
    ASSERT_EQ(held[0].process->ReadLine(), "ready");
    std::string text = RunStatus("resume", false);
    EXPECT_TRUE(absl::StrContains(text, "reserved 1600")) << text;
    ASSERT_EQ(::kill(budgeter->pid(), SIGKILL), 0);  // crash mid-session
    (void)budgeter->Stop();
    in_flight->SettleUnreported().IgnoreError();
  }
  // Not serving: status says what the open reservations will become.
  std::string text = RunStatus("resume", false);
  EXPECT_TRUE(absl::StrContains(text, "count as spent")) << text;

  auto budgeter = StartBudgeter("resume", 10000);
  ASSERT_TRUE(budgeter);
  BudgetClient parent(budgeter.get());
  auto status = parent.Status();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->spent(), 2500 + 1000 + 600);  // open ones count as spent
  EXPECT_EQ(status->left(), 10000 - 4100);
  EXPECT_TRUE(budgeter->Stop().ok());
  int code = 0;
  std::string json = RunStatus("resume", true, &code);
  EXPECT_EQ(code, 0);
  EXPECT_TRUE(absl::StrContains(json, "\"spent\":\"4100\"")) << json;
  // Negative control for the replay: a fresh session starts from zero.
  auto fresh = StartBudgeter("other", 10000);
  BudgetClient other(fresh.get());
  EXPECT_EQ(other.Status()->spent(), 0);
}

// A settle that lowers a charge is queued, not written, when it is answered
// (journal.h); the budgeter writes it once idle. With the top agent alone it
// waits in its read, whose timeout is then the flush's timer; with a child's
// channel too it waits in poll(2). Either way the record reaches the journal
// while the session goes on: without the idle flush it would stay queued
// until the next grant or the end.
TEST_F(BudgetProcessTest, AnIdleBudgeterWritesTheSettleItHeld) {
  for (bool with_child : {false, true}) {
    SCOPED_TRACE(with_child ? "a child's channel open" : "the top agent alone");
    const std::string session = with_child ? "idle-child" : "idle-alone";
    auto budgeter = StartBudgeter(session, 100000);
    ASSERT_TRUE(budgeter);
    BudgetClient parent(budgeter.get());
    std::vector<Spawned> held;
    if (with_child) {
      held = StartChildren(parent, 1, 4000, {"--mode=hold", "--chunk=600"});
      ASSERT_EQ(held[0].process->ReadLine(), "ready");
    }
    const int64_t child_reserved = with_child ? 600 : 0;
    auto reserved = parent.Reserve(30000, "turn", "a");
    ASSERT_TRUE(reserved.ok()) << reserved.status();
    ASSERT_TRUE(reserved->granted());
    auto settled = parent.Settle(reserved->reservation(), 1000, true);
    ASSERT_TRUE(settled.ok()) << settled.status();
    // Polled with a deadline far beyond kIdleBeforeFlush: an idle flush
    // comes within milliseconds; none at all never shows it.
    BudgetStatus status;
    for (int i = 0; i < 1000; ++i) {
      status = JournalStatus(session);
      if (status.spent() == 1000) break;
      ::usleep(10 * 1000);
    }
    EXPECT_EQ(status.spent(), 1000) << "the settle never reached the journal";
    EXPECT_EQ(status.reserved(), child_reserved);
    for (Spawned& child : held) child.process.reset();
    EXPECT_TRUE(budgeter->Stop().ok());
  }
}

TEST_F(BudgetProcessTest, CorruptJournalStopsTheStartWithItsLineNumber) {
  {
    auto budgeter = StartBudgeter("corrupt", 10000);
    BudgetClient parent(budgeter.get());
    Meter meter(&parent);
    for (int i = 0; i < 3; ++i) {
      auto call = meter.Begin(100, "turn", absl::StrCat(i));
      ASSERT_TRUE(call->SettleUnreported().ok());
    }
    ASSERT_TRUE(budgeter->Stop().ok());
  }
  const std::string path =
      BudgetJournalFile(*GarudaSessionFolder(home_, "corrupt"));
  std::string text = *ReadFileToString(path);
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  ASSERT_GE(lines.size(), 5u);
  lines[3] = "{\"settle\": garbage}";
  std::string corrupt = absl::StrJoin(lines, "\n");
  ASSERT_TRUE(WriteFileAtomically(path, corrupt, 0600).ok());

  auto budgeter = StartBudgeter("corrupt", 10000);
  ASSERT_TRUE(budgeter);
  BudgetClient parent(budgeter.get());
  auto status = parent.Status();
  EXPECT_EQ(status.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(budgeter->exit_description(), "status 1"))
      << budgeter->exit_description();
  int code = 0;
  std::string report = RunStatus("corrupt", false, &code);
  EXPECT_EQ(code, 1);
  EXPECT_TRUE(absl::StrContains(report, path + ":4: ")) << report;
  EXPECT_EQ(*ReadFileToString(path), corrupt);  // never reset
}

TEST_F(BudgetProcessTest, StatusShowsTheBreakdownPerAgent) {
  auto budgeter = StartBudgeter("breakdown", 10000);
  BudgetClient parent(budgeter.get());
  std::vector<Spawned> children = StartChildren(
      parent, 1, 3000, {"--mode=early", "--chunk=500", "--used=321"});
  FinishChildren(parent, children);
  ASSERT_TRUE(budgeter->Stop().ok());
  int code = 0;
  std::string text = RunStatus("breakdown", false, &code);
  EXPECT_EQ(code, 0) << text;
  EXPECT_TRUE(absl::StrContains(text, "limit 10000  spent 321")) << text;
  EXPECT_TRUE(absl::StrContains(text, "child-0")) << text;
  EXPECT_TRUE(absl::StrContains(text, "closed")) << text;
}

// The budgeter locks itself down (role "budgeter") before it answers.
TEST_F(BudgetProcessTest, BudgeterServesLockedDown) {
  auto budgeter = StartBudgeter("locked", 1000);
  ASSERT_TRUE(budgeter);
  BudgetClient parent(budgeter.get());
  ASSERT_TRUE(parent.Status().ok());  // it answers: the lockdown is behind it
  auto proc_status = [](const std::string& pid) {
    return ReadFileToString(absl::StrCat("/proc/", pid, "/status"))
        .value_or("");
  };
  std::string locked = proc_status(absl::StrCat(budgeter->pid()));
  EXPECT_TRUE(absl::StrContains(locked, "NoNewPrivs:\t1")) << locked;
  EXPECT_TRUE(absl::StrContains(locked, "Seccomp:\t2")) << locked;
  // Negative control: this test process, not locked down, shows neither.
  std::string free = proc_status("self");
  EXPECT_TRUE(absl::StrContains(free, "Seccomp:\t0")) << free;
}

// --- issue 14 point 12: no sum of the ledger wraps ---

// Reported usages whose plain sum passes 2^63: each settle reports
// kMaxTokens for a 1-token reservation.
TEST_F(BudgetProcessTest, UsageFarBeyondItsReservationNeverWraps) {
  constexpr int kSettles = 8200;
  // Control: these reports summed in int64 would wrap (spent negative).
  int64_t naive = 0;
  bool wrapped = false;
  for (int i = 0; i < kSettles; ++i) {
    wrapped = wrapped || __builtin_add_overflow(naive, kMaxTokens, &naive);
  }
  ASSERT_TRUE(wrapped);

  {
    auto budgeter = StartBudgeter("overflow", kMaxTokens);
    ASSERT_TRUE(budgeter);
    BudgetClient parent(budgeter.get());
    std::vector<uint64_t> open;
    for (int i = 0; i < kSettles; ++i) {
      auto reserved = parent.Reserve(1, "turn", absl::StrCat(i));
      ASSERT_TRUE(reserved.ok() && reserved->granted()) << i;
      open.push_back(reserved->reservation());
    }
    for (uint64_t reservation : open) {
      auto settled = parent.Settle(reservation, kMaxTokens, true);
      ASSERT_TRUE(settled.ok()) << settled.status();
      EXPECT_EQ(settled->charged(), kMaxTokens);
      EXPECT_EQ(settled->left(), 0);
    }
    auto status = parent.Status();
    ASSERT_TRUE(status.ok());
    EXPECT_EQ(status->spent(), kMaxLedgerTokens);  // saturated, not wrapped
    EXPECT_EQ(status->left(), 0);
    // Nothing more is granted, however small.
    auto after = parent.Reserve(1, "turn", "after");
    ASSERT_TRUE(after.ok());
    EXPECT_FALSE(after->granted());
    ASSERT_TRUE(budgeter->Stop().ok());
  }
  // What was persisted replays to the same, and a new run still grants
  // nothing.
  EXPECT_EQ(JournalStatus("overflow").spent(), kMaxLedgerTokens);
  auto budgeter = StartBudgeter("overflow", kMaxTokens);
  ASSERT_TRUE(budgeter);
  BudgetClient parent(budgeter.get());
  auto again = parent.Reserve(1, "turn", "resumed");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->granted());
  EXPECT_GE(parent.Status()->spent(), 0);
  ASSERT_TRUE(budgeter->Stop().ok());

  // A report beyond what one request can cost (the reservation plus the
  // whole lease) is charged at that cap.
  auto small = StartBudgeter("capped", 1000);
  ASSERT_TRUE(small);
  BudgetClient agent(small.get());
  auto reserved = agent.Reserve(10, "turn", "a");
  ASSERT_TRUE(reserved.ok() && reserved->granted());
  auto settled = agent.Settle(reserved->reservation(), int64_t{1} << 40, true);
  ASSERT_TRUE(settled.ok()) << settled.status();
  EXPECT_EQ(settled->charged(), 1010);
  // The reply says it was capped, and what was reported (issue 28).
  EXPECT_TRUE(settled->capped());
  EXPECT_EQ(settled->reported(), int64_t{1} << 40);
  EXPECT_EQ(agent.Status()->agents(0).overrun(), 1000);
  EXPECT_EQ(agent.Status()->agents(0).capped(), 1);
  EXPECT_EQ(agent.Status()->agents(0).capped_tokens(),
            (int64_t{1} << 40) - 1010);
  ASSERT_TRUE(small->Stop().ok());
  EXPECT_EQ(JournalStatus("capped").spent(), 1010);
  // A resume replays the same cap and says so in the breakdown.
  EXPECT_EQ(JournalStatus("capped").agents(0).capped(), 1);
  EXPECT_TRUE(absl::StrContains(FormatStatus(JournalStatus("capped")),
                                "capped: 1 reports above"));
}

// --- issue 14 point 13: bytes that are not a request ---

struct RawRun {
  int exit_code = -1;
  std::string reply_error;  // the Error reply's message, if one came
  std::string err;          // the budgeter's stderr
};

// Starts `garuda-budgeter serve` on a socketpair, writes `bytes` on it and
// (with `close_after`) shuts the writing side, then waits for it to end.
RawRun SendRaw(const std::string& home, const std::string& session,
               const std::string& bytes, bool close_after) {
  RawRun run;
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return run;
  }
  std::string err_path = JoinPath(home, session + ".stderr");
  std::string budgeter = BudgeterPath();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pair[1], 3);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(err, 2);
    ::execl(budgeter.c_str(), budgeter.c_str(), "serve", "--channel-fd=3",
            ("--session=" + session).c_str(), "--limit=1000",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(pair[1]);
  ipc::ChannelOptions options;
  options.peer_name = "garuda-budgeter";
  ipc::Channel channel{UniqueFd(pair[0]), options};
  if (!WriteAll(channel.fd(), bytes).ok()) return run;
  if (close_after) ::shutdown(channel.fd(), SHUT_WR);
  BudgetReply reply;
  // The receive timeout of the channel is the deadline.
  struct timeval timeout = {60, 0};
  ::setsockopt(channel.fd(), SOL_SOCKET, SO_RCVTIMEO, &timeout,
               sizeof(timeout));
  if (channel.Receive(&reply, nullptr).ok() && reply.has_error()) {
    run.reply_error = reply.error().message();
  }
  channel.Close();
  int status = 0;
  if (::waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
    run.exit_code = WEXITSTATUS(status);
  }
  run.err = ReadFileToString(err_path).value_or("");
  return run;
}

std::string Frame(const std::string& body) {
  std::string header(4, '\0');
  ipc::EncodeFrameLength(static_cast<uint32_t>(body.size()), header.data());
  return header + body;
}

TEST_F(BudgetProcessTest, GarbageOnTheChannelIsAnErrorWithItsReason) {
  struct Case {
    const char* name;
    std::string bytes;
    const char* reason;  // in the reply and on stderr
  };
  BudgetRequest unknown_field;  // a valid frame with a wrong seq
  unknown_field.set_seq(7);
  unknown_field.mutable_status();
  const Case cases[] = {
      {"garbage", "hello, budgeter\n", "byte limit"},
      {"oversized", std::string("\xff\xff\xff\x7f", 4) + "x", "byte limit"},
      {"unparsable", Frame(std::string(16, '\xff')), "does not parse"},
      {"wrong-seq", Frame(unknown_field.SerializeAsString()),
       "seq 7 where seq 1 was expected"},
  };
  for (const Case& test : cases) {
    SCOPED_TRACE(test.name);
    RawRun run = SendRaw(home_, test.name, test.bytes, false);
    EXPECT_NE(run.exit_code, 0);
    EXPECT_NE(run.exit_code, -1);
    EXPECT_TRUE(absl::StrContains(run.reply_error, test.reason))
        << run.reply_error;
    EXPECT_TRUE(absl::StrContains(run.err, test.reason)) << run.err;
  }
  // A frame cut short by the peer's end: no reply can go, still non-zero.
  RawRun cut = SendRaw(home_, "truncated", Frame("abcdef").substr(0, 6), true);
  EXPECT_EQ(cut.exit_code, 1) << cut.err;
  EXPECT_TRUE(absl::StrContains(cut.err, "truncated")) << cut.err;
  // Control: a well-formed request is answered and a clean close ends the
  // budgeter with 0.
  BudgetRequest good;
  good.set_seq(1);
  good.mutable_status();
  RawRun clean = SendRaw(home_, "clean", Frame(good.SerializeAsString()), true);
  EXPECT_EQ(clean.exit_code, 0) << clean.err;
  EXPECT_EQ(clean.reply_error, "");
}

}  // namespace
}  // namespace budget
}  // namespace garuda
