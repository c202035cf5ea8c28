// garuda-auditor and garuda-audit run as real programs (audit_fixture.h).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "absl/time/clock.h"
#include "tests/audit/audit_fixture.h"

namespace garuda {
namespace testing_audit {
namespace {

TEST_F(AuditProgramsTest, AppendThenVerify) {
  RunResult run = Append(Events(1, 5));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(Logs().size(), 1u);
  struct stat st;
  ASSERT_EQ(::stat(Folder().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(Logs()[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  run = Verify();
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr(": ok: 6 lines, last seq 6, closed"));
  // One log per writing process.
  Append(Events(1, 1));
  EXPECT_EQ(Logs().size(), 2u);
}

// T8: cut the last line; verify with the checkpoint reports it; without the
// checkpoint it says ok.
TEST_F(AuditProgramsTest, CutLastLineIsReportedOnlyWithCheckpoint) {
  ASSERT_EQ(Append(Events(1, 4)).exit_code, 0);
  CutLastLine(Logs()[0]);
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 0) << "negative control: " << run.out;
  EXPECT_THAT(run.out, HasSubstr(": ok: 4 lines"));

  ASSERT_TRUE(::unlink(Logs()[0].c_str()) == 0);
  Policy("{\"checkpoint\": true}");
  ASSERT_EQ(Append(Events(1, 4)).exit_code, 0);
  ASSERT_EQ(Verify().exit_code, 0);
  CutLastLine(Logs()[0]);
  run = Verify();
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr(": cut: 1 line cut back from the checkpoint "
                                 "at seq 5: the log ends at seq 4"));
}

// T8: delete a file; verify reports the missing file.
TEST_F(AuditProgramsTest, DeletedLogIsReported) {
  ASSERT_EQ(Append(Events(1, 2)).exit_code, 0);
  ASSERT_EQ(::unlink(Logs()[0].c_str()), 0);
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 0) << "negative control: " << run.out;
  EXPECT_THAT(run.out, HasSubstr("no audit logs"));

  Policy("{\"checkpoint\": true}");
  ASSERT_EQ(Append(Events(1, 2)).exit_code, 0);
  std::string log = Logs()[0];
  ASSERT_EQ(::unlink(log.c_str()), 0);
  run = Verify("--json");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("\"status\":\"deleted\""));
}

// T8: the checkpoint holds no target or reason text.
TEST_F(AuditProgramsTest, CheckpointHoldsNoTargetOrReason) {
  Policy("{\"checkpoint\": true}");
  ASSERT_EQ(Append(Events(1, 3)).exit_code, 0);
  std::string log = ReadFile(Logs()[0]);
  std::string checkpoint = ReadFile(CheckpointOf(Logs()[0]));
  // Negative control: the log has the text the checkpoint must not have.
  EXPECT_THAT(log, HasSubstr("rm -rf build3"));
  EXPECT_THAT(log, HasSubstr("secret reason 3"));
  EXPECT_THAT(checkpoint, Not(HasSubstr("rm -rf")));
  EXPECT_THAT(checkpoint, Not(HasSubstr("secret")));
  EXPECT_THAT(checkpoint, HasSubstr("\"seq\":4"));  // with session_end
  struct stat st;
  ASSERT_EQ(::stat(CheckpointOf(Logs()[0]).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(AuditProgramsTest, ProjectSettingsCannotTurnOnTheCheckpoint) {
  WriteFile(JoinPath(project_, ".garuda/settings.json"),
            "{\"audit\": {\"checkpoint\": true}}");
  RunResult run = Append(Events(1, 1));
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.err, HasSubstr("\"audit.checkpoint\" in"));
  EXPECT_THAT(run.err, HasSubstr("is ignored"));
  EXPECT_EQ(ReadFile(CheckpointOf(Logs()[0])), "");
  // Negative control: the same line in the user's policy does turn it on.
  Policy("{\"checkpoint\": true}");
  ASSERT_EQ(Append(Events(1, 1)).exit_code, 0);
  int with_checkpoint = 0;
  for (const std::string& log : Logs()) {
    if (!ReadFile(CheckpointOf(log)).empty()) ++with_checkpoint;
  }
  EXPECT_EQ(with_checkpoint, 1);
}

TEST_F(AuditProgramsTest, MalformedEventIsRefusedWithItsLineNumber) {
  std::string input = Events(1, 2) + "{\"kind\":\"x\",\"tagret\":\"typo\"}\n" +
                      "not json\n" + Events(3, 1);
  RunResult run = Append(input);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("line 3: unknown field \"tagret\""));
  EXPECT_THAT(run.err, HasSubstr("line 4: not a JSON object"));
  EXPECT_THAT(run.out, HasSubstr("3 appended, 2 refused"));
  std::string log = ReadFile(Logs()[0]);
  EXPECT_THAT(log, Not(HasSubstr("typo")));
  run = Verify();
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("ok: 4 lines"));
}

TEST_F(AuditProgramsTest, SplicedAndReorderedLogsAreReported) {
  ASSERT_EQ(Append(Events(1, 4)).exit_code, 0);
  ASSERT_EQ(Append(Events(1, 4)).exit_code, 0);
  std::vector<std::string> logs = Logs();
  ASSERT_EQ(logs.size(), 2u);
  std::vector<std::string> a = absl::StrSplit(ReadFile(logs[0]), '\n');
  std::vector<std::string> b = absl::StrSplit(ReadFile(logs[1]), '\n');
  // Same events, same seqs: only the chain tells them apart.
  WriteFile(logs[0], a[0] + "\n" + a[1] + "\n" + b[2] + "\n" + b[3] + "\n");
  std::string reordered = b[0] + "\n" + b[2] + "\n" + b[1] + "\n" + b[3] + "\n";
  WriteFile(logs[1], reordered);
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 2);
  EXPECT_EQ(run.out.find(": ok"), std::string::npos) << run.out;
  EXPECT_THAT(run.out, HasSubstr("chain_broken"));
}

TEST_F(AuditProgramsTest, OlderCheckpointPutBackIsReported) {
  Policy("{\"checkpoint\": true}");
  std::unique_ptr<ipc::HelperProcess> auditor = Serve();
  ASSERT_NE(auditor, nullptr);
  ASSERT_TRUE(AppendOverChannel(*auditor, 1, 2, true).ok());
  std::string checkpoint_path = CheckpointOf(Logs()[0]);
  std::string older = ReadFile(checkpoint_path);
  ASSERT_TRUE(AppendOverChannel(*auditor, 3, 2, true).ok());
  ASSERT_TRUE(CloseOverChannel(*auditor).ok());
  ASSERT_EQ(Verify().exit_code, 0);
  WriteFile(checkpoint_path, older);
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out,
              HasSubstr("checkpoint_behind: the checkpoint is at seq 2 "
                        "but the closed log goes on to seq 5"));
}

// Log and checkpoint rolled back together: consistent, so verify alone
// cannot see it; the witness does.
TEST_F(AuditProgramsTest, RollbackNeedsTheWitness) {
  std::string store = JoinPath(base_, "witness/heads.jsonl");
  ASSERT_TRUE(MakeDirectories(Dirname(store), 0700).ok());
  Policy(
      absl::StrCat("{\"checkpoint\": true, \"checkpointEvery\": 1, "
                   "\"checkpointCommand\": ",
                   "\"", Audit(), " witness --store ", store, "\"}"));
  std::unique_ptr<ipc::HelperProcess> auditor = Serve();
  ASSERT_NE(auditor, nullptr);
  absl::StatusOr<audit::AuditReply> reply =
      AppendOverChannel(*auditor, 1, 3, true);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(reply->appended().warnings_size(), 0);
  std::string log_path = Logs()[0];
  std::string old_log = ReadFile(log_path);
  std::string old_checkpoint = ReadFile(CheckpointOf(log_path));
  ASSERT_TRUE(AppendOverChannel(*auditor, 4, 3, true).ok());
  ASSERT_TRUE(CloseOverChannel(*auditor).ok());
  ASSERT_EQ(Verify(absl::StrCat("--witness ", Quote(store))).exit_code, 0)
      << "negative control";

  WriteFile(log_path, old_log);
  WriteFile(CheckpointOf(log_path), old_checkpoint);
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 0) << "not detected without a witness: " << run.out;
  run = Verify(absl::StrCat("--witness ", Quote(store)));
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_THAT(run.out, HasSubstr("witness_mismatch: rolled back: the log ends "
                                 "at seq 3 but the witness holds its head at "
                                 "seq 7"));
}

TEST_F(AuditProgramsTest, WitnessFailureIsLoggedAndShown) {
  Policy("{\"checkpointEvery\": 2, \"checkpointCommand\": \"exit 3\"}");
  RunResult run = Append(Events(1, 3));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("warning: witness \"exit 3\""));
  EXPECT_THAT(ReadFile(Logs()[0]), HasSubstr("\"kind\":\"witness_failed\""));
  EXPECT_EQ(Verify().exit_code, 0);
}

TEST_F(AuditProgramsTest, KilledAuditorIsNoticedByItsClient) {
  Policy("{\"checkpoint\": true, \"fsyncMaxMs\": 600000}");
  std::unique_ptr<ipc::HelperProcess> auditor = Serve();
  ASSERT_NE(auditor, nullptr);
  absl::StatusOr<audit::AuditReply> reply =
      AppendOverChannel(*auditor, 1, 2, true);
  ASSERT_TRUE(reply.ok()) << "negative control: " << reply.status();
  EXPECT_EQ(reply->appended().last_seq(), 2u);
  // Written but not yet in an fsynced group, so past the checkpoint.
  reply = AppendOverChannel(*auditor, 3, 2, false);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_FALSE(reply->appended().durable());
  ASSERT_EQ(::kill(auditor->pid(), SIGKILL), 0);
  reply = AppendOverChannel(*auditor, 3, 1, true);
  ASSERT_FALSE(reply.ok());
  EXPECT_TRUE(absl::IsUnavailable(reply.status())) << reply.status();
  EXPECT_THAT(std::string(reply.status().message()),
              HasSubstr("killed by signal 9"));
  // What it wrote is intact; a log ahead of its checkpoint after a crash
  // is not tampering.
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("ok: 4 lines, last seq 4, 2 lines after the "
                                 "checkpoint at seq 2 (not closed"));
}

// Ctrl-C (or SIGTERM) during append: the complete lines are written and the
// log is closed; SIGKILL, the negative control, leaves it open.
TEST_F(AuditProgramsTest, InterruptedAppendClosesTheLog) {
  Policy("{\"checkpoint\": true, \"fsyncMaxMs\": 600000}");
  for (int signal_number : {SIGINT, SIGKILL}) {
    for (const std::string& log : Logs()) {
      ::unlink(log.c_str());
      ::unlink(CheckpointOf(log).c_str());
    }
    int input[2];
    ASSERT_EQ(::pipe2(input, O_CLOEXEC), 0);
    std::string auditor = Auditor();
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // The input stays open in the parent until the auditor has exited,
      // as a terminal's does: the signal, not an end of input, stops it.
      ::dup2(input[0], 0);
      ::execl(auditor.c_str(), auditor.c_str(), "append", "--project",
              project_.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    ::close(input[0]);
    std::string events = Events(1, 2) + "{\"kind\":\"partial";
    ASSERT_EQ(::write(input[1], events.data(), events.size()),
              static_cast<ssize_t>(events.size()));
    // Waits for the condition (with a generous cap), not for a fixed time.
    absl::Time give_up = absl::Now() + absl::Seconds(60);
    auto lines = [&] {
      std::vector<std::string> logs = Logs();
      if (logs.empty()) return 0L;
      std::string text = ReadFile(logs[0]);
      return static_cast<long>(std::count(text.begin(), text.end(), '\n'));
    };
    while (lines() < 2 && absl::Now() < give_up) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    ASSERT_EQ(lines(), 2);
    ASSERT_EQ(::kill(pid, signal_number), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ::close(input[1]);
    RunResult run = Verify();
    EXPECT_EQ(run.exit_code, 0) << run.out;
    if (signal_number == SIGINT) {
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status;
      EXPECT_THAT(run.out, HasSubstr("ok: 3 lines, last seq 3, closed, matches "
                                     "its checkpoint"));
    } else {
      EXPECT_THAT(run.out, HasSubstr("ok: 2 lines, last seq 2, 2 lines after "
                                     "the checkpoint at seq 0 (not closed"));
    }
    EXPECT_THAT(ReadFile(Logs()[0]), Not(HasSubstr("partial")));
  }
}

TEST_F(AuditProgramsTest, AuditorIsLockedDownWhileServing) {
  std::unique_ptr<ipc::HelperProcess> auditor = Serve();
  ASSERT_NE(auditor, nullptr);
  // After its first answer the auditor is past LockDown.
  ASSERT_TRUE(AppendOverChannel(*auditor, 1, 1, true).ok());
  std::string pid = absl::StrCat(auditor->pid());
  // Negative control: this test process has neither.
  int own_filters = std::atoi(ProcStatus("self", "Seccomp_filters").c_str());
  EXPECT_EQ(ProcStatus(pid, "NoNewPrivs"), "1");
  EXPECT_EQ(ProcStatus(pid, "Seccomp"), "2");
  EXPECT_GT(std::atoi(ProcStatus(pid, "Seccomp_filters").c_str()), own_filters);
  ASSERT_TRUE(CloseOverChannel(*auditor).ok());
}

// The golden vectors of lib/audit/testdata, checked by the real verify.
TEST_F(AuditProgramsTest, GoldenLogVerifies) {
  std::string golden = ReadFile(Runfile("lib/audit/testdata/golden.jsonl"));
  ASSERT_FALSE(golden.empty());
  // The project's audit folder, as the auditor names it.
  ASSERT_EQ(Append(Events(1, 1)).exit_code, 0);
  std::string path = JoinPath(Folder(), "golden.jsonl");
  WriteFile(path, golden);
  RunResult run = Verify();
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("/golden: ok: 3 lines, last seq 3"));
  // Negative control: the same bytes under another name do not verify (the
  // genesis hash binds the log name), nor with one byte changed.
  WriteFile(JoinPath(Folder(), "golden2.jsonl"), golden);
  std::string changed = golden;
  changed[changed.find("sed -i")] = 'S';
  WriteFile(path, changed);
  run = Verify();
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.out,
              HasSubstr("/golden: modified: line 1 (seq 1) was modified"));
  EXPECT_THAT(run.out, HasSubstr("/golden2: chain_broken"));
}

TEST_F(AuditProgramsTest, UsageErrors) {
  EXPECT_EQ(Shell(Quote(Audit()) + " frobnicate").exit_code, 2);
  EXPECT_EQ(Shell(Quote(Audit()) + " verify --all --project /x").exit_code, 2);
  EXPECT_EQ(Shell(Quote(Auditor()) + " append").exit_code, 2);
  EXPECT_EQ(
      Shell(Quote(Audit()) + " verify --witness /nonexistent/heads").exit_code,
      2);
}

}  // namespace
}  // namespace testing_audit
}  // namespace garuda
