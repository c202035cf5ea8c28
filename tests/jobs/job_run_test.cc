// `garuda-agent run JOB` through the real programs (T6 of the spec, issue
// 16): the runner, the job's session, garuda-stager and garuda-applier
// reading the job file themselves, against the scripted provider on
// loopback. Each security test has its negative control: the same job
// without the scope (or the same call outside a job) does the bad thing.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/json_message.h"
#include "lib/changeset/test_tree.h"
#include "lib/jobs/process.h"
#include "lib/jobs/run.h"
#include "proto/job.pb.h"
#include "tests/agent/fakes.h"
#include "tests/providers/scripted_server.h"

namespace garuda {
namespace jobs {
namespace {

using garuda::testing::Read;
using garuda::testing::Runfile;
using garuda::testing::Write;
using provider::ProviderScript;
using provider::ScriptedReply;
using provider::testing::ScriptedServer;
using provider::testing::ServerKind;

ScriptedReply Text(const std::string& text) {
  return garuda::testing::TextReply(text);
}
ScriptedReply Call(const std::string& id, const std::string& tool,
                   const std::string& arguments) {
  return garuda::testing::ToolCallReply(id, tool, arguments);
}
ScriptedReply Bash(const std::string& id, const std::string& command) {
  return Call(id, "bash", absl::StrCat(R"({"command":")", command, R"("})"));
}
ScriptedReply WriteFile(const std::string& id, const std::string& path,
                        const std::string& content) {
  return Call(
      id, "write_file",
      absl::StrCat(R"({"path":")", path, R"(","content":")", content, R"("})"));
}

struct JobRun {
  int code = -1;
  std::string out, err;
  JobReport report;
};

class JobRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = garuda::testing::NewTempDir("job");
    home_ = base_ + "/home";
    checkout_ = base_ + "/checkout";
    managed_ = base_ + "/managed";
    helpers_ = base_ + "/helpers";
    for (const std::string& dir : {home_, checkout_, managed_, helpers_}) {
      garuda::testing::MakeDir(dir);
    }
    garuda::testing::MakeDir(home_ + "/.garuda");
    for (const char* program :
         {"garuda-agent", "garuda-auditor", "garuda-budgeter", "garuda-stager",
          "garuda-applier"}) {
      garuda::testing::Symlink(
          Runfile(absl::StrCat("cmd/", program, "/", program)),
          JoinPath(helpers_, program));
    }
    Write(checkout_ + "/src/a.c", "int a;\n");
    Write(checkout_ + "/ci/deploy.yml", "deploy: safe\n");
    Write(checkout_ + "/README.md", "readme\n");
    Git({"init", "-q", "-b", "main"});
    Git({"add", "-A"});
    Git({"commit", "-q", "-m", "base"});
  }

  std::string Git(const std::vector<std::string>& args,
                  const std::string& where = "") {
    std::vector<std::string> argv = {
        "/usr/bin/git",   "-C", where.empty() ? checkout_ : where, "-c",
        "user.name=Test", "-c", "user.email=test@localhost"};
    argv.insert(argv.end(), args.begin(), args.end());
    absl::StatusOr<ProgramRun> ran = RunProgram(argv, -1, 2);
    EXPECT_TRUE(ran.ok()) << ran.status();
    EXPECT_EQ(ran->exit_code, 0) << absl::StrJoin(args, " ");
    return std::string(absl::StripTrailingAsciiWhitespace(ran->out));
  }

  // .garuda/jobs/<name>.json in the checkout (not committed: the person's).
  void JobFile(const std::string& name, const std::string& json) {
    Write(checkout_ + "/.garuda/jobs/" + name + ".json", json);
  }

  void StartServer(ProviderScript script) {
    auto server = ScriptedServer::Start(ServerKind::kOpenAi, std::move(script));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }

  std::vector<std::string> Env(std::vector<std::string> extra = {}) {
    std::vector<std::string> env = {"HOME=" + home_, "PATH=/usr/bin:/bin",
                                    "GARUDA_MANAGED_POLICY_DIR=" + managed_,
                                    "OPENAI_API_KEY=sk-test-key"};
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
  }

  // Runs `argv` with `env` (not this process's environment).
  static ProgramRun RunWith(const std::vector<std::string>& argv,
                            const std::vector<std::string>& env,
                            std::string* err) {
    std::string errors_path = garuda::testing::NewTempDir("err") + "/stderr";
    UniqueFd errors(
        ::open(errors_path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    std::vector<std::string> wrapped = {"/usr/bin/env", "-i"};
    wrapped.insert(wrapped.end(), env.begin(), env.end());
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    absl::StatusOr<ProgramRun> ran = RunProgram(wrapped, -1, errors.get());
    EXPECT_TRUE(ran.ok()) << ran.status();
    *err = Read(errors_path);
    return ran.ok() ? *ran : ProgramRun();
  }

  JobRun Run(const std::string& job, std::vector<std::string> env = {}) {
    std::vector<std::string> argv = {JoinPath(helpers_, "garuda-agent"),
                                     "run",
                                     job,
                                     "--json",
                                     "--project",
                                     checkout_,
                                     "--helpers-dir",
                                     helpers_,
                                     "--provider",
                                     "openai",
                                     "--model",
                                     "m",
                                     "--base-url",
                                     server_->base_url()};
    JobRun run;
    ProgramRun ran = RunWith(argv, Env(std::move(env)), &run.err);
    run.code = ran.exit_code;
    run.out = ran.out;
    EXPECT_TRUE(ParseJsonMessage(run.out, "the job report", &run.report).ok())
        << run.out << run.err;
    return run;
  }

  // The file as the job's worktree has it.
  std::string InWorktree(const JobRun& run, const std::string& path) {
    return ReadFileToString(JoinPath(run.report.worktree(), path))
        .value_or("<absent>");
  }

  // The person's working tree, git's own folder left out.
  std::map<std::string, std::string> WorkingTree() {
    std::map<std::string, std::string> files =
        garuda::testing::Snapshot(checkout_);
    for (auto it = files.begin(); it != files.end();) {
      if (absl::StartsWith(it->first, ".git/") || it->first == ".git") {
        it = files.erase(it);
      } else {
        ++it;
      }
    }
    return files;
  }

  std::string base_, home_, checkout_, managed_, helpers_;
  std::unique_ptr<ScriptedServer> server_;
};

// A command writing outside the scope: the sandbox refuses the write, the
// report shows the failed call, nothing outside is committed. Control: the
// same job without a scope writes the file.
TEST_F(JobRunTest, ACommandWritingOutsideTheScopeFails) {
  for (bool scoped : {true, false}) {
    SCOPED_TRACE(scoped ? "scoped" : "no scope (control)");
    ProviderScript script;
    *script.add_replies() = Bash("c1", "echo evil > ci/deploy.yml");
    *script.add_replies() = Text("done");
    StartServer(script);
    JobFile("nightly", scoped ? R"({"prompt": "p", "writeScope": ["src"]})"
                              : R"({"prompt": "p"})");
    JobRun run = Run("nightly");
    ASSERT_EQ(run.code, 0) << run.err;
    ASSERT_EQ(run.report.tool_calls_size(), 1) << run.out;
    if (scoped) {
      EXPECT_EQ(run.report.tool_calls(0).outcome(), "exited with code 1");
      EXPECT_EQ(InWorktree(run, "ci/deploy.yml"), "deploy: safe\n");
      EXPECT_EQ(run.report.commit(), "");  // nothing changed
      EXPECT_TRUE(absl::StrContains(run.err, "Commands may write only: src."))
          << run.err;
    } else {
      EXPECT_EQ(run.report.tool_calls(0).outcome(), "exited with code 0");
      EXPECT_EQ(InWorktree(run, "ci/deploy.yml"), "evil\n");
      EXPECT_NE(run.report.commit(), "");
      // An old job's first line says what it may do.
      EXPECT_TRUE(
          absl::StartsWith(run.err,
                           "garuda-agent: Commands may write anywhere in the "
                           "worktree.\n"))
          << run.err;
    }
  }
}

// An edit outside the scope is denied although an allow rule matches it.
// Control: the same rule allows the same edit in a job without a scope.
TEST_F(JobRunTest, AnEditOutsideTheScopeIsDeniedWithAnAllowRule) {
  for (bool scoped : {true, false}) {
    SCOPED_TRACE(scoped ? "scoped" : "no scope (control)");
    ProviderScript script;
    *script.add_replies() = WriteFile("w1", "ci/deploy.yml", "deploy: evil");
    *script.add_replies() = Text("done");
    StartServer(script);
    JobFile(
        "edit",
        absl::StrCat(R"json({"prompt": "p", )json",
                     scoped ? R"json("writeScope": ["src"], )json" : "",
                     R"json("permissions": {"allow": ["write_file"]}})json"));
    JobRun run = Run("edit");
    ASSERT_EQ(run.code, 0) << run.err;
    if (scoped) {
      ASSERT_EQ(run.report.denied_calls_size(), 1) << run.out;
      EXPECT_EQ(run.report.denied_calls(0).tool(), "write_file");
      EXPECT_EQ(run.report.denied_calls(0).target(), "ci/deploy.yml");
      EXPECT_TRUE(absl::StrContains(run.report.denied_calls(0).why(),
                                    "outside the job's write scope"))
          << run.out;
      EXPECT_EQ(InWorktree(run, "ci/deploy.yml"), "deploy: safe\n");
    } else {
      EXPECT_EQ(run.report.denied_calls_size(), 0) << run.out;
      EXPECT_EQ(InWorktree(run, "ci/deploy.yml"), "deploy: evil");
    }
  }
}

// outside_sandbox is denied before any rule, an allow rule for the
// command included. Control: outside a job the same rule lets the same
// call run on the host.
TEST_F(JobRunTest, OutsideSandboxIsDeniedWithAnAllowRule) {
  const std::string marker = base_ + "/host-marker";
  const std::string call = absl::StrCat(R"({"command":"touch )", marker,
                                        R"(","outside_sandbox":true})");
  ProviderScript script;
  *script.add_replies() = Call("h1", "bash", call);
  *script.add_replies() = Text("done");
  StartServer(script);
  JobFile("host", R"json({"prompt": "p", "writeScope": ["src"],
      "permissions": {"allow": ["bash(touch *)"]}})json");
  JobRun run = Run("host");
  ASSERT_EQ(run.code, 0) << run.err;
  ASSERT_EQ(run.report.denied_calls_size(), 1) << run.out;
  EXPECT_TRUE(absl::StrContains(run.report.denied_calls(0).why(),
                                "a job never runs a command outside the OS "
                                "sandbox"))
      << run.out;
  EXPECT_NE(::access(marker.c_str(), F_OK), 0);

  // Control: a one-shot session with the same rule in the person's
  // settings runs it on the host.
  Write(home_ + "/.garuda/settings.json",
        R"json({"permissions": {"allow": ["bash(touch *)"]}})json");
  ProviderScript again;
  *again.add_replies() = Call("h1", "bash", call);
  *again.add_replies() = Text("done");
  StartServer(again);
  std::string err;
  ProgramRun ran =
      RunWith({JoinPath(helpers_, "garuda-agent"), "--project", checkout_,
               "--helpers-dir", helpers_, "--provider", "openai", "--model",
               "m", "--base-url", server_->base_url(), "-p", "p"},
              Env(), &err);
  EXPECT_EQ(ran.exit_code, 0) << err;
  EXPECT_EQ(::access(marker.c_str(), F_OK), 0) << err;
}

// A link inside a scope folder pointing out of it: a command's write
// through it meets the read-only worktree, an edit through it is denied.
// Control: a link to a folder inside the scope is written through.
TEST_F(JobRunTest, ALinkInsideTheScopeCannotReachOutside) {
  for (bool outside : {true, false}) {
    SCOPED_TRACE(outside ? "link out of the scope" : "link inside (control)");
    ProviderScript script;
    *script.add_replies() =
        Bash("l1", outside ? "ln -s ../ci src/out"
                           : "mkdir src/in && ln -s in src/out");
    *script.add_replies() = Bash("l2", "echo evil > src/out/deploy.yml");
    *script.add_replies() = WriteFile("l3", "src/out/edit.yml", "evil");
    *script.add_replies() = Text("done");
    StartServer(script);
    JobFile("link", R"json({"prompt": "p", "writeScope": ["src"],
        "permissions": {"allow": ["write_file"]}})json");
    JobRun run = Run("link");
    ASSERT_EQ(run.code, 0) << run.err;
    ASSERT_EQ(run.report.tool_calls_size(), 3) << run.out;
    if (outside) {
      EXPECT_EQ(run.report.tool_calls(1).outcome(), "exited with code 1");
      EXPECT_EQ(InWorktree(run, "ci/deploy.yml"), "deploy: safe\n");
      EXPECT_EQ(InWorktree(run, "ci/edit.yml"), "<absent>");
      ASSERT_EQ(run.report.denied_calls_size(), 1) << run.out;
      EXPECT_EQ(run.report.denied_calls(0).tool(), "write_file");
    } else {
      EXPECT_EQ(run.report.tool_calls(1).outcome(), "exited with code 0");
      EXPECT_EQ(InWorktree(run, "src/in/deploy.yml"), "evil\n");
    }
  }
}

// The model tries to widen its scope by editing the job file: the
// worktree's copy is outside the scope and hidden from commands, and the
// checkout's file is not in the sandbox at all. Control: the same command
// run by the person changes the checkout's job file.
TEST_F(JobRunTest, TheModelCannotWidenTheScope) {
  const std::string widened =
      R"json({\"prompt\": \"p\", \"writeScope\": [\"src\", \"ci\"]})json";
  const std::string job_path = checkout_ + "/.garuda/jobs/widen.json";
  const std::string original = R"json({"prompt": "p", "writeScope": ["src"],
      "permissions": {"allow": ["write_file"]}})json";
  Write(checkout_ + "/.garuda/jobs/widen.json", original);
  Git({"add", "-A"});
  Git({"commit", "-q", "-m", "the job"});
  ProviderScript script;
  *script.add_replies() = WriteFile("j1", ".garuda/jobs/widen.json", widened);
  *script.add_replies() = Bash(
      "j2",
      absl::StrCat("echo x > .garuda/jobs/widen.json; echo x > ", job_path));
  *script.add_replies() = Text("done");
  StartServer(script);
  JobRun run = Run("widen");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(Read(job_path), original);
  EXPECT_EQ(InWorktree(run, ".garuda/jobs/widen.json"), original);
  ASSERT_GE(run.report.denied_calls_size(), 1) << run.out;
  EXPECT_EQ(run.report.denied_calls(0).tool(), "write_file");
  EXPECT_EQ(run.report.tool_calls(1).outcome(), "exited with code 1");

  std::string err;
  ProgramRun control = RunWith(
      {"/bin/bash", "-c", absl::StrCat("echo x > ", job_path)}, Env(), &err);
  EXPECT_EQ(control.exit_code, 0) << err;
  EXPECT_EQ(Read(job_path), "x\n");
}

// A change outside the scope made by something other than a command (the
// test seam writes the worktree after the turn, as a git operation or
// another process could): the post-check fails the job, nothing is
// committed. Control: the same seam writing inside the scope passes.
TEST_F(JobRunTest, ThePostCheckCatchesAChangeByAnythingElse) {
  for (bool outside : {true, false}) {
    SCOPED_TRACE(outside ? "outside" : "inside (control)");
    ProviderScript script;
    *script.add_replies() = Text("nothing to do");
    StartServer(script);
    JobFile("post", R"({"prompt": "p", "writeScope": ["src"]})");
    JobRun run =
        Run("post", {absl::StrCat("GARUDA_TEST_ONLY_JOB_CHANGE_AFTER_TURN=",
                                  outside ? ".github/workflows/ci.yml"
                                          : "src/generated.c")});
    if (outside) {
      EXPECT_EQ(run.code, 1) << run.err;
      EXPECT_EQ(run.report.status(), "failed");
      EXPECT_TRUE(absl::StartsWith(run.report.reason(),
                                   "changes outside the approved scope: "
                                   ".github/workflows/ci.yml"))
          << run.out;
      EXPECT_EQ(run.report.outside_scope_size(), 1);
      EXPECT_EQ(run.report.commit(), "");
      EXPECT_EQ(Git({"rev-parse", run.report.branch()}),
                Git({"rev-parse", "main"}));
    } else {
      EXPECT_EQ(run.code, 0) << run.err;
      EXPECT_NE(run.report.commit(), "");
    }
  }
}

// A stop signal to the runner during the turn (systemd stopping the unit,
// Ctrl-C): passed on to the session, which ends its turn; the job fails and
// nothing is committed. Control: the other tests' runs commit.
TEST_F(JobRunTest, AStopSignalDuringTheTurnCommitsNothing) {
  ProviderScript script;
  ScriptedReply hold = Text("working");
  hold.set_fault(ScriptedReply::HOLD);
  *script.add_replies() = hold;
  StartServer(script);
  JobFile("stopped", R"({"prompt": "p", "writeScope": ["src"]})");
  const std::string pid_file = base_ + "/runner.pid";
  JobRun run;
  std::thread runner([&] {
    ProgramRun ran = RunWith(
        {"/bin/sh", "-c",
         absl::StrCat("echo $$ > ", pid_file, "; exec \"$0\" \"$@\""),
         JoinPath(helpers_, "garuda-agent"), "run", "stopped", "--json",
         "--project", checkout_, "--helpers-dir", helpers_, "--provider",
         "openai", "--model", "m", "--base-url", server_->base_url()},
        Env(), &run.err);
    run.code = ran.exit_code;
    run.out = ran.out;
  });
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (server_->request_count() == 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));  // polled, with a deadline
  }
  ASSERT_EQ(server_->request_count(), 1u);
  int pid = 0;
  ASSERT_TRUE(
      absl::SimpleAtoi(absl::StripAsciiWhitespace(Read(pid_file)), &pid));
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  runner.join();
  EXPECT_EQ(run.code, 1) << run.err;
  ASSERT_TRUE(ParseJsonMessage(run.out, "report", &run.report).ok()) << run.out;
  EXPECT_TRUE(absl::StartsWith(run.report.reason(), "interrupted by signal 15"))
      << run.report.reason();
  EXPECT_EQ(run.report.commit(), "");
  EXPECT_EQ(Git({"rev-parse", run.report.branch()}),
            Git({"rev-parse", "main"}));
}

// The job's tokenBudget bounds its turn: a budget too small for one request
// ends the turn before anything is sent, and the job fails without a
// commit. Control: every other test's job, with the default budget.
TEST_F(JobRunTest, TheJobsTokenBudgetBoundsItsTurn) {
  ProviderScript script;
  *script.add_replies() = Bash("c1", "echo 'int a = 2;' > src/a.c");
  *script.add_replies() = Text("done");
  StartServer(script);
  JobFile("small",
          R"({"prompt": "p", "writeScope": ["src"], "tokenBudget": 5})");
  JobRun run = Run("small");
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_TRUE(
      absl::StartsWith(run.report.reason(), "the turn did not finish (exit 3)"))
      << run.report.reason();
  EXPECT_EQ(server_->request_count(), 0u);
  EXPECT_EQ(run.report.commit(), "");
}

// A job given as a path relative to the current folder: the session and its
// helpers read the same file (the stager holds its scope).
TEST_F(JobRunTest, AJobFileGivenAsARelativePath) {
  ProviderScript script;
  *script.add_replies() = Bash("c1", "echo evil > ci/deploy.yml");
  *script.add_replies() = Text("done");
  StartServer(script);
  JobFile("relative", R"({"prompt": "p", "writeScope": ["src"]})");
  JobRun run;
  ProgramRun ran = RunWith(
      {"/bin/sh", "-c",
       absl::StrCat("cd ", checkout_, " && exec \"$0\" \"$@\""),
       JoinPath(helpers_, "garuda-agent"), "run", ".garuda/jobs/relative.json",
       "--json", "--helpers-dir", helpers_, "--provider", "openai", "--model",
       "m", "--base-url", server_->base_url()},
      Env(), &run.err);
  ASSERT_EQ(ran.exit_code, 0) << run.err;
  ASSERT_TRUE(ParseJsonMessage(ran.out, "report", &run.report).ok()) << ran.out;
  EXPECT_EQ(run.report.job_file(), checkout_ + "/.garuda/jobs/relative.json");
  EXPECT_EQ(run.report.tool_calls(0).outcome(), "exited with code 1");
  EXPECT_EQ(InWorktree(run, "ci/deploy.yml"), "deploy: safe\n");
}

// Every refused scope entry is named; the job does not start (exit 2).
TEST_F(JobRunTest, EveryInvalidScopeEntryIsRefusedWithItsName) {
  ASSERT_EQ(::symlink("ci", (checkout_ + "/linked").c_str()), 0);
  Git({"add", "-A"});
  Git({"commit", "-q", "-m", "a link"});
  ProviderScript script;
  StartServer(script);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {".", R"(writeScope[0]: "." is the whole worktree)"},
      {"..", R"(writeScope[0]: ".." is outside the worktree)"},
      {"/etc", R"(writeScope[0]: "/etc" is an absolute path)"},
      {"", R"(writeScope[0]: "" is empty)"},
      {".git", R"(writeScope[0]: ".git" is git's own folder)"},
      {".git/hooks", R"(writeScope[0]: ".git/hooks" is git's own folder)"},
      {"src/../ci", R"(writeScope[0]: "src/../ci" has a ".." component)"},
      {"linked",
       R"(writeScope[0]: "linked" is reached through a symbolic link)"},
  };
  for (const auto& [entry, message] : cases) {
    SCOPED_TRACE(entry);
    JobFile("bad", absl::StrCat(R"({"prompt": "p", "writeScope": [")", entry,
                                R"("]})"));
    JobRun run = Run("bad");
    EXPECT_EQ(run.code, 2) << run.err;
    EXPECT_TRUE(absl::StrContains(run.report.reason(), message))
        << run.report.reason();
    // Nothing is left behind: no branch, no worktree.
    EXPECT_EQ(run.report.branch(), "");
    EXPECT_EQ(Git({"branch", "--list", "garuda/*"}), "");
    EXPECT_EQ(Git({"worktree", "list", "--porcelain"}).find("bad-"),
              std::string::npos);
  }
  EXPECT_EQ(server_->request_count(), 0u);  // no job got as far as a turn
}

// The test command has the job's scope: its write outside fails the job.
// Control: the same test command in a job without a scope writes.
TEST_F(JobRunTest, TheTestCommandRunsUnderTheSameScope) {
  for (bool scoped : {true, false}) {
    SCOPED_TRACE(scoped ? "scoped" : "no scope (control)");
    ProviderScript script;
    *script.add_replies() = Bash("c1", "echo 'int b;' > src/b.c");
    *script.add_replies() = Text("done");
    StartServer(script);
    JobFile("tested",
            absl::StrCat(R"({"prompt": "p", )",
                         scoped ? R"("writeScope": ["src"], )" : "",
                         R"("testCommand": "echo ran > ci/test-output"})"));
    JobRun run = Run("tested");
    if (scoped) {
      EXPECT_EQ(run.code, 1) << run.err;
      EXPECT_TRUE(absl::StartsWith(run.report.reason(),
                                   "the test command exited with 1"))
          << run.out;
      EXPECT_EQ(InWorktree(run, "ci/test-output"), "<absent>");
      EXPECT_EQ(run.report.commit(), "");
    } else {
      EXPECT_EQ(run.code, 0) << run.err;
      EXPECT_EQ(run.report.test_exit_code(), 0);
      EXPECT_EQ(InWorktree(run, "ci/test-output"), "ran\n");
    }
  }
}

// git works in a job's worktree (the test command reads the log and the
// status) while the repository's folder stays read-only and its hooks
// hidden. Control: on the host the same user can write there.
TEST_F(JobRunTest, GitReadsTheRepositoryInTheSandboxButCannotWriteIt) {
  ProviderScript script;
  *script.add_replies() = Bash("c1", "echo 'int b;' > src/b.c");
  *script.add_replies() = Text("done");
  StartServer(script);
  JobFile("gitty", R"({"prompt": "p", "writeScope": ["src"], "testCommand": )"
                   R"("test \"$(git log -1 --format=%s)\" = base && )"
                   R"(git status --porcelain | grep -q src/b.c && )"
                   R"(g=$(git rev-parse --git-common-dir) && ! touch $g/written && )"
                   R"(! cat $g/hooks/pre-commit.sample"})");
  JobRun run = Run("gitty");
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_EQ(run.report.test_exit_code(), 0) << run.out;
  EXPECT_NE(run.report.commit(), "");
  EXPECT_NE(::access((checkout_ + "/.git/written").c_str(), F_OK), 0);
  // Control: the repository's folder is writable to this user outside.
  ASSERT_EQ(::access((checkout_ + "/.git/hooks/pre-commit.sample").c_str(), R_OK), 0);
  Write(checkout_ + "/.git/written", "x");
  EXPECT_EQ(::access((checkout_ + "/.git/written").c_str(), F_OK), 0);
}

// Without an OS sandbox a job does not start. Control: the first test's
// runs, with the sandbox.
TEST_F(JobRunTest, NoSandboxNoJob) {
  ProviderScript script;
  *script.add_replies() = Bash("c1", "echo y > src/a.c");
  *script.add_replies() = Text("done");
  StartServer(script);
  JobFile("nosandbox", R"({"prompt": "p", "writeScope": ["src"]})");
  JobRun run = Run("nosandbox", {"GARUDA_TEST_ONLY_PRETEND_NO_SANDBOX=1"});
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_EQ(run.report.status(), "failed");
  EXPECT_TRUE(absl::StrContains(run.err,
                                "a job never runs a command outside "
                                "the OS sandbox"))
      << run.err;
  EXPECT_EQ(server_->request_count(), 0u);
  EXPECT_EQ(InWorktree(run, "src/a.c"), "int a;\n");
}

// End to end: one commit on the job's branch with exactly the scope's
// changes; the person's working tree and branch untouched.
TEST_F(JobRunTest, ASucceedingJobLeavesOneCommitWithTheScopesChanges) {
  const std::string main_before = Git({"rev-parse", "main"});
  ProviderScript script;
  *script.add_replies() = Bash("c1", "echo 'int a = 1;' > src/a.c");
  *script.add_replies() = WriteFile("w1", "src/new/b.c", "int b;");
  *script.add_replies() = Text("Done.");
  StartServer(script);
  JobFile("e2e", R"json({"prompt": "update src", "writeScope": ["src"],
      "permissions": {"allow": ["write_file(src/**)"]},
      "testCommand": "test -f src/new/b.c"})json");
  const std::map<std::string, std::string> before = WorkingTree();
  JobRun run = Run("e2e");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.report.status(), "succeeded");
  EXPECT_TRUE(absl::StartsWith(run.report.branch(), "garuda/e2e/"));
  // Every field is in the object, the empty ones too.
  for (const char* key :
       {"\"status\":", "\"reason\":\"\"", "\"commit\":", "\"outsideScope\":[]",
        "\"deniedCalls\":[]", "\"tokens\":"}) {
    EXPECT_TRUE(absl::StrContains(run.out, key)) << key << " in " << run.out;
  }
  ASSERT_NE(run.report.commit(), "");
  EXPECT_EQ(Git({"rev-parse", run.report.branch()}), run.report.commit());
  EXPECT_EQ(Git({"rev-parse", run.report.commit() + "^"}), main_before);
  EXPECT_EQ(Git({"diff", "--name-only", main_before, run.report.commit()}),
            "src/a.c\nsrc/new/b.c");
  EXPECT_EQ(Git({"show", run.report.commit() + ":src/a.c"}), "int a = 1;");
  EXPECT_EQ(run.report.changed_files_size(), 2);
  EXPECT_EQ(run.report.test_exit_code(), 0);
  EXPECT_GT(run.report.tokens().input(), 0u);
  // The person's side: the same files, the same branch.
  EXPECT_EQ(WorkingTree(), before);
  EXPECT_EQ(Git({"rev-parse", "main"}), main_before);
  EXPECT_EQ(Git({"rev-parse", "--abbrev-ref", "HEAD"}), "main");
  EXPECT_FALSE(absl::StartsWith(run.report.worktree(), checkout_ + "/"));
  // The last result, for `garuda-agent jobs`.
  absl::StatusOr<std::string> real = RealProjectRoot(checkout_);
  ASSERT_TRUE(real.ok());
  EXPECT_TRUE(absl::StrContains(
      ReadFileToString(LastReportFile(home_, *real, "e2e")).value_or(""),
      run.report.commit()));
  // Every decision in the checkout's audit log: the session's calls and the
  // run's own steps; no log of the worktree's.
  const std::string audit = home_ + "/.garuda/audit";
  std::string logs;
  for (const auto& [path, entry] : garuda::testing::Snapshot(audit)) {
    if (absl::StartsWith(path, ProjectKey(*real) + "/")) logs += entry;
    EXPECT_FALSE(absl::StrContains(path, "e2e-")) << path;
  }
  for (const char* kind : {"\"tool_call\"", "\"job_post_check\"",
                           "\"job_test\"", "\"job_commit\""}) {
    EXPECT_TRUE(absl::StrContains(logs, kind)) << kind;
  }
  EXPECT_TRUE(absl::StrContains(logs, "src/new/b.c"));
  // `garuda-agent jobs`: the scope and the last result.
  std::string err;
  ProgramRun listed = RunWith(
      {JoinPath(helpers_, "garuda-agent"), "jobs", "--project", checkout_},
      Env(), &err);
  EXPECT_EQ(listed.exit_code, 0) << err;
  EXPECT_TRUE(absl::StartsWith(
      listed.out,
      absl::StrCat("e2e  scope: src  last: succeeded ", run.report.branch(),
                   " ", run.report.commit().substr(0, 12))))
      << listed.out;
}

// /schedule in a chat: the model writes the prompt, Garuda proposes the
// scope (the named file's folder, the language's build output), and the
// applier writes the job file only when it agrees itself: with no person,
// an allow rule of the person's settings. Control: without the rule,
// nothing is written.
TEST_F(JobRunTest, ScheduleProposesAJobAndTheApplierWritesIt) {
  Write(checkout_ + "/Cargo.toml", "[package]\n");
  Write(checkout_ + "/src/app/main.rs", "fn main() {}\n");
  for (bool allowed : {true, false}) {
    SCOPED_TRACE(allowed ? "allowed" : "no rule (control)");
    ::unlink((checkout_ + "/.garuda/jobs/nightly.json").c_str());
    Write(home_ + "/.garuda/settings.json",
          allowed ? R"json({"permissions": {"allow":
              ["write_file(.garuda/jobs/*)"]}})json"
                  : "{}");
    ProviderScript script;
    *script.add_replies() =
        Call("r1", "read_file", R"({"path":"src/app/main.rs"})");
    *script.add_replies() = Text("It prints nothing.");
    *script.add_replies() = Text("Keep src/app/main.rs formatted.");
    StartServer(script);
    const std::string input = base_ + "/lines";
    Write(input, "look at main.rs\n/schedule nightly\n");
    std::string err;
    ProgramRun ran =
        RunWith({"/bin/sh", "-c", "exec \"$0\" \"$@\" < " + input,
                 JoinPath(helpers_, "garuda-agent"), "--project", checkout_,
                 "--helpers-dir", helpers_, "--provider", "openai", "--model",
                 "m", "--base-url", server_->base_url()},
                Env(), &err);
    EXPECT_EQ(ran.exit_code, 0) << err;
    const std::string job =
        ReadFileToString(checkout_ + "/.garuda/jobs/nightly.json")
            .value_or("<absent>");
    if (allowed) {
      EXPECT_EQ(job,
                "{\n  \"prompt\": \"Keep src/app/main.rs formatted.\",\n"
                "  \"writeScope\": [\"src/app\", \"target\"]\n}\n")
          << err;
    } else {
      EXPECT_EQ(job, "<absent>") << err;
    }
    EXPECT_TRUE(absl::StrContains(err, "writeScope: src/app, target")) << err;
  }
}

}  // namespace
}  // namespace jobs
}  // namespace garuda
