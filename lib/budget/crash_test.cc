// A budgeter killed with SIGKILL right after it answered a grant: the grant
// is in the journal (written before the answer), so the resumed session
// charges it. The negative control keeps the journal in memory until close,
// and the same kill loses the grant.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/budget/journal.h"
#include "lib/budget/meter.h"
#include "lib/budget/server.h"
#include "lib/ipc/channel.h"

namespace garuda {
namespace budget {
namespace {

constexpr int64_t kLimit = 10000;

class CrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "crashXXXXXX");
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    path_ = BudgetJournalFile(*GarudaSessionFolder(templ, "s"));
  }
  void TearDown() override {
    client_.reset();
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  // A budgeter in a child process, serving one end of a socketpair; this
  // process talks to it as the top agent.
  void StartBudgeter(bool write_only_at_close) {
    auto pair = ipc::MakeSocketPair();
    ASSERT_TRUE(pair.ok()) << pair.status();
    pid_ = ::fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      // The child: no gtest assertions here, only an exit code.
      pair->second.Reset();
      JournaledLedger::Start start{path_, kLimit};
      start.write_only_at_close = write_only_at_close;
      auto ledger = JournaledLedger::Open(start);
      if (!ledger.ok()) ::_exit(2);
      BudgetServer server(ledger->get());
      absl::Status served = server.Serve(ipc::Channel(std::move(pair->first)));
      // As garuda-budgeter does when Serve returns (_exit runs no destructor).
      absl::Status closed = (*ledger)->Close();
      ::_exit(served.ok() && closed.ok() ? 0 : 3);
    }
    pair->first.Reset();
    client_ =
        std::make_unique<BudgetClient>(ipc::Channel(std::move(pair->second)));
  }

  // SIGKILL, at once: nothing the budgeter would do on its way out runs.
  void KillBudgeter() {
    ASSERT_EQ(::kill(pid_, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid_, &status, 0), pid_);
    pid_ = -1;
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  }

  // What a resumed session counts as spent.
  int64_t SpentOnResume(std::vector<std::string>* notes = nullptr) {
    auto resumed = JournaledLedger::Open({path_, kLimit});
    EXPECT_TRUE(resumed.ok()) << resumed.status();
    if (!resumed.ok()) return -1;
    if (notes != nullptr) *notes = (*resumed)->start_notes();
    return (*resumed)->ledger().Status().spent();
  }

  // Reserves 700 tokens; the grant has been answered when this returns.
  void Grant() {
    auto reserved = client_->Reserve(700, "turn", "req-1");
    ASSERT_TRUE(reserved.ok()) << reserved.status();
    ASSERT_TRUE(reserved->granted());
  }

  std::string path_;
  pid_t pid_ = -1;
  std::unique_ptr<BudgetClient> client_;
};

TEST_F(CrashTest, KilledRightAfterAGrantTheResumeChargesIt) {
  StartBudgeter(/*write_only_at_close=*/false);
  Grant();
  KillBudgeter();
  std::vector<std::string> notes;
  EXPECT_EQ(SpentOnResume(&notes), 700);
  bool said = false;
  for (const std::string& note : notes) {
    said = said || absl::StrContains(note,
                                     "charged 700 tokens of reservations "
                                     "open at a crash");
  }
  EXPECT_TRUE(said);
}

TEST_F(CrashTest, NegativeControlJournalWrittenOnlyAtCloseLosesTheGrant) {
  StartBudgeter(/*write_only_at_close=*/true);
  Grant();
  KillBudgeter();
  EXPECT_EQ(SpentOnResume(), 0);  // the 700 granted tokens are forgotten
}

TEST_F(CrashTest, NegativeControlStillWritesAtClose) {
  // The control differs only in when it writes: closed normally, it keeps
  // the grant (open at the end of the session, so charged as spent).
  StartBudgeter(/*write_only_at_close=*/true);
  Grant();
  client_.reset();  // the top agent hangs up: the budgeter closes its journal
  int status = 0;
  ASSERT_EQ(::waitpid(pid_, &status, 0), pid_);
  pid_ = -1;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(SpentOnResume(), 700);
}

}  // namespace
}  // namespace budget
}  // namespace garuda
