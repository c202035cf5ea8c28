// The real garuda-agent program with the real helpers (garuda-auditor,
// garuda-budgeter, garuda-stager, garuda-applier) against a scripted
// provider on loopback: one-shot runs, the strict profile at start (with the
// fake probe GARUDA_TEST_ONLY_PRETEND_NO_SANDBOX and its negative control),
// --resume, keys kept out of the journal and the audit log, and a helper
// killed during a session.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "tests/agent/json_schema.h"
#include "lib/base/json_message.h"
#include "lib/changeset/test_tree.h"
#include "lib/provider/json.h"
#include "lib/question/question.h"
#include "proto/agent_report.pb.h"
#include "proto/budgeter_service.pb.h"
#include "tests/agent/fakes.h"
#include "tests/providers/scripted_server.h"

namespace garuda {
namespace agent {
namespace {

using provider::ProviderScript;
using provider::ScriptedReply;
using provider::testing::ScriptedServer;
using provider::testing::ServerKind;

constexpr char kKey[] = "sk-test-5ecret-K3y-0123456789abcdef";

// How long a wait for another process may take before the test fails
// with what it was waiting for.
constexpr absl::Duration kDeadline = absl::Seconds(30);

// Polls `done` until it holds (true) or the deadline passes (false).
bool Eventually(const std::function<bool()>& done) {
  absl::Time deadline = absl::Now() + kDeadline;
  while (!done()) {
    if (absl::Now() > deadline) return false;
    ::poll(nullptr, 0, 1);  // between two looks
  }
  return true;
}

// Reads `fd` into `seen` until it holds `text` (true), or until the end of
// the stream or the deadline (false).
bool ReadUntil(int fd, absl::string_view text, std::string* seen) {
  absl::Time deadline = absl::Now() + kDeadline;
  char buffer[4096];
  while (!absl::StrContains(*seen, text)) {
    int left = static_cast<int>(
        absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (left <= 0) return false;
    struct pollfd ready = {fd, POLLIN, 0};
    if (::poll(&ready, 1, left) <= 0) continue;
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n <= 0) return false;
    seen->append(buffer, static_cast<size_t>(n));
  }
  return true;
}

using garuda::testing::Runfile;

// Every string in a request body's JSON, one after another: the text the
// model was sent, unescaped.
void AppendStrings(const google::protobuf::Value& value, std::string* out) {
  switch (value.kind_case()) {
    case google::protobuf::Value::kStringValue:
      absl::StrAppend(out, value.string_value(), "\n");
      break;
    case google::protobuf::Value::kListValue:
      for (const auto& item : value.list_value().values()) {
        AppendStrings(item, out);
      }
      break;
    case google::protobuf::Value::kStructValue:
      for (const auto& [key, field] : value.struct_value().fields()) {
        AppendStrings(field, out);
      }
      break;
    default:
      break;
  }
}

// docs/stream-json.schema.json, parsed (the test's data).
absl::StatusOr<google::protobuf::Value> StreamJsonSchema() {
  absl::StatusOr<std::string> text =
      ReadFileToString(Runfile("docs/stream-json.schema.json"));
  if (!text.ok()) return text.status();
  return provider::ParseJson(*text, "docs/stream-json.schema.json");
}

std::string SentText(const std::string& body) {
  absl::StatusOr<google::protobuf::Value> parsed =
      provider::ParseJson(body, "request body");
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  std::string out;
  if (parsed.ok()) AppendStrings(*parsed, &out);
  return out;
}

ScriptedReply Text(const std::string& text) {
  return garuda::testing::TextReply(text);
}

ScriptedReply Bash(const std::string& id, const std::string& command) {
  return garuda::testing::ToolCallReply(
      id, "bash", absl::StrCat(R"({"command":")", command, R"("})"));
}

struct AgentRun {
  int code = -1;
  std::string out, err;
};

class AgentProgramTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = garuda::testing::NewTempDir("agent");
    home_ = base_ + "/home";
    project_ = base_ + "/project";
    managed_ = base_ + "/managed";
    helpers_ = base_ + "/helpers";
    for (const std::string& dir : {home_, project_, managed_, helpers_}) {
      garuda::testing::MakeDir(dir);
    }
    garuda::testing::MakeDir(home_ + "/.garuda");
    garuda::testing::Write(project_ + "/notes.txt", "old line\n");
    for (const char* helper : {"garuda-auditor", "garuda-budgeter",
                               "garuda-stager", "garuda-applier"}) {
      garuda::testing::Symlink(
          Runfile(absl::StrCat("cmd/", helper, "/", helper)),
          JoinPath(helpers_, helper));
    }
  }

  void StartServer(ProviderScript script) {
    auto server = ScriptedServer::Start(ServerKind::kOpenAi, std::move(script));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }

  std::vector<std::string> Argv(std::vector<std::string> extra) {
    std::vector<std::string> argv = {Runfile("cmd/garuda-agent/garuda-agent"),
                                     "--project",
                                     project_,
                                     "--helpers-dir",
                                     helpers_,
                                     "--provider",
                                     "openai",
                                     "--model",
                                     "m",
                                     "--base-url",
                                     server_->base_url()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }

  std::vector<std::string> Env(bool pretend_no_sandbox) {
    std::vector<std::string> env = {"HOME=" + home_, "PATH=/usr/bin:/bin",
                                    "GARUDA_MANAGED_POLICY_DIR=" + managed_,
                                    absl::StrCat("OPENAI_API_KEY=", kKey)};
    if (pretend_no_sandbox) {
      env.push_back("GARUDA_TEST_ONLY_PRETEND_NO_SANDBOX=1");
    }
    return env;
  }

  // Starts the agent with pipes on 0, 1 and 2.
  pid_t Start(const std::vector<std::string>& argv,
              const std::vector<std::string>& env, UniqueFd* in, UniqueFd* out,
              UniqueFd* err) {
    int pin[2], pout[2], perr[2];
    EXPECT_EQ(::pipe2(pin, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(pout, O_CLOEXEC), 0);
    EXPECT_EQ(::pipe2(perr, O_CLOEXEC), 0);
    std::vector<char*> args, envp;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    for (const std::string& e : env)
      envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
      ::dup2(pin[0], 0);
      ::dup2(pout[1], 1);
      ::dup2(perr[1], 2);
      ::setpgid(0, 0);
      ::execve(args[0], args.data(), envp.data());
      ::_exit(127);
    }
    ::close(pin[0]);
    ::close(pout[1]);
    ::close(perr[1]);
    *in = UniqueFd(pin[1]);
    *out = UniqueFd(pout[0]);
    *err = UniqueFd(perr[0]);
    return pid;
  }

  AgentRun RunAgent(std::vector<std::string> extra,
                    bool pretend_no_sandbox = false,
                    const std::string& input = "") {
    return RunArgv(Argv(std::move(extra)), pretend_no_sandbox, input);
  }

  // The same in another project folder.
  AgentRun RunIn(const std::string& project, std::vector<std::string> extra) {
    std::vector<std::string> argv = Argv(std::move(extra));
    argv[2] = project;  // --project
    return RunArgv(argv, false, "");
  }

  AgentRun RunArgv(const std::vector<std::string>& argv,
                   bool pretend_no_sandbox, const std::string& input) {
    UniqueFd in, out, err;
    pid_t pid = Start(argv, Env(pretend_no_sandbox), &in, &out, &err);
    EXPECT_TRUE(WriteAll(in.get(), input).ok());
    in.Reset();
    AgentRun run;
    // stdout to its end, then stderr: what these runs write to stderr
    // stays far below a pipe's buffer, so the agent never blocks on it.
    run.out = ReadAll(out.get()).value_or("");
    run.err = ReadAll(err.get()).value_or("");
    int status = 0;
    ::waitpid(pid, &status, 0);
    run.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return run;
  }

  // `garuda-budgeter status --session ID --json`: the budget's own record.
  budget::BudgetStatus BudgetStatusOf(const std::string& session_id) {
    UniqueFd in, out, err;
    pid_t pid = Start({Runfile("cmd/garuda-budgeter/garuda-budgeter"),
                       "status", "--session", session_id, "--json"},
                      Env(false), &in, &out, &err);
    in.Reset();
    std::string text = ReadAll(out.get()).value_or("");
    std::string errors = ReadAll(err.get()).value_or("");
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_EQ(WEXITSTATUS(status), 0) << errors;
    budget::BudgetStatus parsed;
    EXPECT_TRUE(ParseJsonMessage(text, "budgeter status", &parsed).ok())
        << text;
    return parsed;
  }

  std::string Notes() { return garuda::testing::Read(project_ + "/notes.txt"); }

  // Every file under `dir`, concatenated.
  std::string AllFiles(const std::string& dir) {
    std::string all;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return all;
    while (struct dirent* entry = ::readdir(d)) {
      std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      std::string path = JoinPath(dir, name);
      if (entry->d_type == DT_DIR) {
        all += AllFiles(path);
      } else if (entry->d_type == DT_REG) {
        all += ReadFileToString(path).value_or("");
      }
    }
    ::closedir(d);
    return all;
  }

  // A one-shot run in staged mode (`settings` in the project's settings)
  // whose model runs one command that changes notes.txt, then answers
  // `answer`; `extra` flags after -p.
  AgentRun RunStagedEdit(
      const std::string& answer, std::vector<std::string> extra,
      const std::string& settings = R"({"commands": {"mode": "staged"}})") {
    garuda::testing::MakeDir(project_ + "/.garuda");
    garuda::testing::Write(project_ + "/.garuda/settings.json", settings);
    ProviderScript script;
    *script.add_replies() = Bash("c1", "echo new line > notes.txt");
    *script.add_replies() = Text(answer);
    StartServer(script);
    std::vector<std::string> argv = {"-p", "change the notes"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunAgent(argv);
  }

  struct AskRun {
    int code = -1;
    std::string terminal;
  };

  // `garuda-applier apply --ask --project P < file` with a pseudo-terminal
  // as its terminal (/dev/tty): types `key` at the question's prompt.
  AskRun ApplyAsking(const std::string& file, const std::string& key) {
    std::string applier = Runfile("cmd/garuda-applier/garuda-applier");
    std::vector<std::string> env = Env(false);
    int master = -1;
    pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
    if (pid == 0) {
      int in = ::open(file.c_str(), O_RDONLY);
      if (in < 0 || ::dup2(in, 0) < 0) ::_exit(126);
      std::vector<char*> envp;
      for (const std::string& e : env) {
        envp.push_back(const_cast<char*>(e.c_str()));
      }
      envp.push_back(nullptr);
      const char* argv[] = {applier.c_str(), "apply",          "--ask",
                            "--project",     project_.c_str(), nullptr};
      ::execve(argv[0], const_cast<char**>(argv), envp.data());
      ::_exit(127);
    }
    AskRun run;
    if (ReadUntil(master, "[v]iew: ", &run.terminal)) {
      EXPECT_TRUE(WriteAll(master, key).ok());
    }
    ReadUntil(master, "\x01never\x01", &run.terminal);  // to its end
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(master);
    run.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return run;
  }

  std::string base_, home_, project_, managed_, helpers_;
  std::unique_ptr<ScriptedServer> server_;
};

TEST_F(AgentProgramTest, OneShotJsonWithACommandInTheSandbox) {
  ProviderScript script;
  *script.add_replies() = Bash("c1", "echo hi; echo new line > notes.txt");
  *script.add_replies() = Text("Changed it.");
  StartServer(script);
  AgentRun run =
      RunAgent({"-p", "change the notes", "--output-format", "json"});
  ASSERT_EQ(run.code, 0) << run.err;
  OneShotReport report;
  ASSERT_TRUE(ParseJsonMessage(run.out, "stdout", &report).ok()) << run.out;
  EXPECT_EQ(report.answer(), "Changed it.");
  ASSERT_EQ(report.tool_calls_size(), 1);
  EXPECT_EQ(report.tool_calls(0).tool(), "bash");
  EXPECT_EQ(report.tool_calls(0).outcome(), "exited with code 0");
  EXPECT_EQ(report.usage().requests(), 2u);
  EXPECT_TRUE(report.usage().usage_reported());
  // Direct mode (the default): the command wrote the project in the sandbox.
  EXPECT_EQ(Notes(), "new line\n");
  EXPECT_TRUE(absl::StrContains(run.err, "commands direct")) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "sandbox on")) << run.err;
  ASSERT_EQ(server_->request_count(), 2u);
  EXPECT_TRUE(absl::StrContains(server_->requests()[1].body(), "hi"));

  // The key went to the server, never to the journal or the audit log.
  EXPECT_TRUE(absl::StrContains(
      server_->requests()[0].headers().at("authorization"), kKey));
  std::string journal = AllFiles(home_ + "/.garuda/sessions");
  EXPECT_TRUE(absl::StrContains(journal, "change the notes"));
  EXPECT_FALSE(absl::StrContains(journal, kKey));
  std::string audit = AllFiles(home_ + "/.garuda/audit");
  EXPECT_TRUE(absl::StrContains(audit, "tool_call"));
  EXPECT_TRUE(absl::StrContains(audit, "session_start"));
  EXPECT_FALSE(absl::StrContains(audit, kKey));

  // --resume continues the conversation.
  ProviderScript again;
  *again.add_replies() = Text("Still here.");
  StartServer(again);
  AgentRun resumed =
      RunAgent({"--resume", report.session_id(), "-p", "and now?"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(resumed.out, "Still here.\n");
  ASSERT_EQ(server_->request_count(), 1u);
  EXPECT_TRUE(
      absl::StrContains(server_->requests()[0].body(), "change the notes"));
  EXPECT_TRUE(absl::StrContains(server_->requests()[0].body(), "Changed it."));
}

// A command's output that is not UTF-8 reaches the model, the report, the
// journal and a resumed session alike, its bad bytes as U+FFFD (protobuf's
// strings take only UTF-8: before, the report and the journal dropped them
// silently and libprotobuf logged an error on stderr). The control within:
// the valid bytes around them stay as they were.
TEST_F(AgentProgramTest, OutputThatIsNotUtf8IsKeptAsReplacementCharacters) {
  ProviderScript script;
  // Bash() puts the command into JSON as it is: the backslashes are JSON's.
  *script.add_replies() = Bash("c1", R"(printf 'ok\\377\\376bad\\n')");
  *script.add_replies() = Text("Seen.");
  StartServer(script);
  AgentRun run = RunAgent({"-p", "look", "--output-format", "json"});
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string replaced = "ok\xEF\xBF\xBD\xEF\xBF\xBD" "bad";
  OneShotReport report;
  ASSERT_TRUE(ParseJsonMessage(run.out, "stdout", &report).ok()) << run.out;
  ASSERT_EQ(report.tool_calls_size(), 1);
  EXPECT_TRUE(absl::StrContains(report.tool_calls(0).output(), replaced))
      << report.tool_calls(0).output();
  EXPECT_FALSE(absl::StrContains(run.err, "invalid UTF-8")) << run.err;
  ASSERT_EQ(server_->request_count(), 2u);
  EXPECT_TRUE(absl::StrContains(server_->requests()[1].body(), replaced));

  ProviderScript again;
  *again.add_replies() = Text("Again.");
  StartServer(again);
  AgentRun resumed = RunAgent({"--resume", report.session_id(), "-p", "more"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  ASSERT_EQ(server_->request_count(), 1u);
  EXPECT_TRUE(absl::StrContains(server_->requests()[0].body(), replaced))
      << server_->requests()[0].body();
}

// Issue 18 point 2: a staged change that no person could answer is kept
// as a ChangeSet file in the session folder, listed in the report, and the
// model is told; nothing lands. A person applies it later with
// `garuda-applier apply --ask` (the conflict check as always).
TEST_F(AgentProgramTest, OneShotStagedChangesAreKeptForReview) {
  AgentRun run = RunStagedEdit("It was kept.", {"--output-format", "json"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(Notes(), "old line\n");  // nothing landed
  EXPECT_TRUE(absl::StrContains(run.err, "commands staged")) << run.err;
  OneShotReport report;
  ASSERT_TRUE(ParseJsonMessage(run.out, "stdout", &report).ok()) << run.out;
  ASSERT_EQ(report.kept_changes_size(), 1) << run.out;
  const KeptChangeSet& kept = report.kept_changes(0);
  EXPECT_EQ(kept.path(),
            absl::StrCat(home_, "/.garuda/sessions/", report.session_id(),
                         "/staged/1.changeset"));
  EXPECT_TRUE(absl::StrContains(kept.summary(), "M notes.txt  (+1 -1)"))
      << kept.summary();
  EXPECT_EQ(kept.files(), 1u);
  EXPECT_EQ(kept.call_id(), "c1");
  ASSERT_EQ(report.tool_calls_size(), 1);
  EXPECT_EQ(report.tool_calls(0).kept_changes().path(), kept.path());
  struct stat st;
  ASSERT_EQ(::stat(kept.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // The model was told what happened and where the list is.
  ASSERT_EQ(server_->request_count(), 2u);
  std::string told = SentText(server_->requests()[1].body());
  EXPECT_TRUE(absl::StrContains(told, "kept for review in " + kept.path()))
      << told;
  EXPECT_TRUE(absl::StrContains(told, "garuda-applier apply --ask"));
  EXPECT_FALSE(absl::StrContains(told, kAppliedLine));
  EXPECT_TRUE(
      absl::StrContains(AllFiles(home_ + "/.garuda/audit"), "\"kept\""));

  // Reviewed later: discard writes nothing (the list stays for another
  // look), apply writes it.
  AskRun discarded = ApplyAsking(kept.path(), "d");
  EXPECT_EQ(discarded.code, 3) << discarded.terminal;
  EXPECT_TRUE(absl::StrContains(discarded.terminal, "+new line"))
      << discarded.terminal;
  EXPECT_EQ(Notes(), "old line\n");
  AskRun applied = ApplyAsking(kept.path(), "a");
  EXPECT_EQ(applied.code, 0) << applied.terminal;
  EXPECT_EQ(Notes(), "new line\n");
}

// The conflict check holds for a kept list as for any other: a file that
// changed since the command refuses the whole list.
TEST_F(AgentProgramTest, AKeptListThatNoLongerFitsIsAConflict) {
  AgentRun run = RunStagedEdit("Kept.", {"--output-format", "json"});
  ASSERT_EQ(run.code, 0) << run.err;
  OneShotReport report;
  ASSERT_TRUE(ParseJsonMessage(run.out, "stdout", &report).ok()) << run.out;
  ASSERT_EQ(report.kept_changes_size(), 1) << run.out;
  garuda::testing::Write(project_ + "/notes.txt", "the person's line\n");
  AskRun applied = ApplyAsking(report.kept_changes(0).path(), "a");
  EXPECT_EQ(applied.code, 4) << applied.terminal;  // conflict
  EXPECT_EQ(Notes(), "the person's line\n");
}

// --apply-staged: the applier, started with its own flag, applies the
// staged change (conflict check as always) and the audit log records that
// the flag applied it. The control is the test above: without the flag
// nothing lands.
TEST_F(AgentProgramTest, ApplyStagedLandsAndIsAudited) {
  AgentRun run =
      RunStagedEdit("Applied.", {"--output-format", "json", "--apply-staged"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(Notes(), "new line\n");
  OneShotReport report;
  ASSERT_TRUE(ParseJsonMessage(run.out, "stdout", &report).ok()) << run.out;
  EXPECT_EQ(report.kept_changes_size(), 0);
  ASSERT_EQ(report.tool_calls_size(), 1);
  EXPECT_TRUE(report.tool_calls(0).applied_by_apply_staged());
  std::string told = SentText(server_->requests()[1].body());
  EXPECT_TRUE(absl::StrContains(told,
                                "The changes were applied with no "
                                "question (garuda-agent -p "
                                "--apply-staged)"))
      << told;
  std::string audit = AllFiles(home_ + "/.garuda/audit");
  EXPECT_TRUE(absl::StrContains(audit, "\"apply_staged\"")) << audit;
  EXPECT_TRUE(absl::StrContains(audit, "applied by --apply-staged")) << audit;
}

// Refusals as always: a deny rule for a changed path stops the list even
// with --apply-staged; and the flag is for one-shot runs only.
TEST_F(AgentProgramTest, ApplyStagedKeepsTheRules) {
  AgentRun run = RunStagedEdit("Refused.", {"--apply-staged"},
                               R"json({"commands": {"mode": "staged"},
              "permissions": {"deny": ["write_file(notes.txt)"]}})json");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(Notes(), "old line\n");
  std::string told = SentText(server_->requests()[1].body());
  EXPECT_TRUE(absl::StrContains(told, kDiscardedLine)) << told;
  EXPECT_TRUE(absl::StrContains(told, "write_file(notes.txt)")) << told;

  AgentRun usage = RunAgent({"--apply-staged"});
  EXPECT_EQ(usage.code, 2);
  EXPECT_TRUE(absl::StrContains(usage.err, "--apply-staged needs -p"))
      << usage.err;
}

TEST_F(AgentProgramTest, ProjectInstructionsReachTheModel) {
  garuda::testing::Write(project_ + "/AGENTS.md",
                         "Always run make check before you answer.\n");
  garuda::testing::Write(home_ + "/.garuda/AGENTS.md", "Answer tersely.\n");
  ProviderScript script;
  *script.add_replies() = Text("Noted.");
  *script.add_replies() = Text("Noted again.");
  StartServer(script);
  AgentRun run = RunAgent({"-p", "hello"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(absl::StrContains(
      run.err, "Instructions: ~/.garuda/AGENTS.md (16 bytes), AGENTS.md (41 bytes)"))
      << run.err;
  ASSERT_EQ(server_->request_count(), 1u);
  const std::string body = server_->requests()[0].body();
  EXPECT_TRUE(absl::StrContains(body, "Always run make check before you answer."));
  EXPECT_TRUE(absl::StrContains(body, "Answer tersely."));
  // Control: without the files, the same run sends neither.
  ASSERT_EQ(::unlink((project_ + "/AGENTS.md").c_str()), 0);
  ASSERT_EQ(::unlink((home_ + "/.garuda/AGENTS.md").c_str()), 0);
  AgentRun without = RunAgent({"-p", "hello"});
  ASSERT_EQ(without.code, 0) << without.err;
  ASSERT_EQ(server_->request_count(), 2u);
  EXPECT_FALSE(absl::StrContains(server_->requests()[1].body(), "make check"));
  EXPECT_FALSE(absl::StrContains(without.err, "Instructions:"));
}

TEST_F(AgentProgramTest, StrictWithoutSandboxDoesNotStart) {
  garuda::testing::Write(home_ + "/.garuda/policy.json",
                         R"({"profile": "strict"})");
  ProviderScript script;
  *script.add_replies() = Text("never");
  StartServer(script);
  AgentRun run = RunAgent({"-p", "hello"}, /*pretend_no_sandbox=*/true);
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "strict")) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "did not start")) << run.err;
  EXPECT_EQ(server_->request_count(), 0u);
}

TEST_F(AgentProgramTest, AProjectCannotTurnStrictOff) {
  garuda::testing::Write(home_ + "/.garuda/policy.json",
                         R"({"profile": "strict"})");
  garuda::testing::MakeDir(project_ + "/.garuda");
  garuda::testing::Write(project_ + "/.garuda/settings.json",
                         R"({"profile": "default"})");
  ProviderScript script;
  *script.add_replies() = Text("never");
  StartServer(script);
  AgentRun run = RunAgent({"-p", "hello"}, /*pretend_no_sandbox=*/true);
  EXPECT_EQ(run.code, 1) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "strict")) << run.err;
  EXPECT_EQ(server_->request_count(), 0u);
}

// The negative control of the two above: the default profile starts without
// a sandbox, with the notice, and a command asks (no person: no).
TEST_F(AgentProgramTest, DefaultProfileWithoutSandboxStartsWithTheNotice) {
  ProviderScript script;
  *script.add_replies() = Bash("c1", "echo new line > notes.txt");
  *script.add_replies() = Text("Not allowed.");
  StartServer(script);
  AgentRun run = RunAgent({"-p", "hello"}, /*pretend_no_sandbox=*/true);
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "no OS sandbox")) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "sandbox NONE")) << run.err;
  EXPECT_EQ(Notes(), "old line\n");
  ASSERT_EQ(server_->request_count(), 2u);
  EXPECT_TRUE(
      absl::StrContains(server_->requests()[1].body(), "no person can answer"));
}

TEST_F(AgentProgramTest, StrictToolSchemaHasNoOutsideSandbox) {
  garuda::testing::Write(home_ + "/.garuda/policy.json",
                         R"({"profile": "strict"})");
  ProviderScript script;
  ScriptedReply call = Text("Trying.");
  provider::ScriptedToolCall* tool = call.add_tool_calls();
  tool->set_id("c1");
  tool->set_name("bash");
  tool->set_arguments_json(
      R"({"command":"echo new line > notes.txt","outside_sandbox":true})");
  *script.add_replies() = call;
  *script.add_replies() = Text("Refused.");
  StartServer(script);
  AgentRun run = RunAgent({"-p", "hello", "--output-format", "json"});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, "profile strict")) << run.err;
  EXPECT_FALSE(
      absl::StrContains(server_->requests()[0].body(), "outside_sandbox"));
  OneShotReport report;
  ASSERT_TRUE(ParseJsonMessage(run.out, "stdout", &report).ok()) << run.out;
  ASSERT_EQ(report.tool_calls_size(), 1);
  EXPECT_EQ(report.tool_calls(0).decision(), "input check failed");
  EXPECT_EQ(Notes(), "old line\n");
}

TEST_F(AgentProgramTest, WithoutAModelTheSessionStartsAndBangCommandsWork) {
  UniqueFd in, out, err;
  std::vector<std::string> argv = {Runfile("cmd/garuda-agent/garuda-agent"),
                                   "--project", project_, "--helpers-dir",
                                   helpers_};
  // Lines from a pipe: no person at a terminal, so the stager runs the
  // !command on the host only by an allow rule it reads itself.
  garuda::testing::Write(home_ + "/.garuda/settings.json",
                         R"json({"permissions": {"allow": ["bash(echo *)"]}})json");
  pid_t pid = Start(argv, Env(false), &in, &out, &err);
  ASSERT_TRUE(WriteAll(in.get(), "!echo from the person\nhello\n/exit\n").ok());
  in.Reset();
  std::string stdout_text = ReadAll(out.get()).value_or("");
  std::string stderr_text = ReadAll(err.get()).value_or("");
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << stderr_text;
  EXPECT_TRUE(absl::StrContains(stderr_text, "model none configured"))
      << stderr_text;
  EXPECT_TRUE(absl::StrContains(stderr_text, "No model configured"));
  EXPECT_TRUE(absl::StrContains(stderr_text, "from the person")) << stderr_text;
  // One-shot needs a model: a usage error that says how to configure one.
  AgentRun one_shot;
  pid = Start(
      {argv[0], "--project", project_, "--helpers-dir", helpers_, "-p", "hi"},
      Env(false), &in, &out, &err);
  in.Reset();
  one_shot.err = ReadAll(err.get()).value_or("");
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_TRUE(absl::StrContains(one_shot.err, "baseUrl")) << one_shot.err;
}

// The key is read, then removed from the agent's environment before any
// helper starts: a command the person runs on the host (`!env`, which
// inherits the stager's environment) does not see it. The control: a
// variable the agent does not remove reaches the same command.
TEST_F(AgentProgramTest, HelpersAndHostCommandsNeverSeeTheApiKey) {
  StartServer(ProviderScript());
  UniqueFd in, out, err;
  std::vector<std::string> env = Env(false);
  env.push_back("GARUDA_TEST_MARKER=inherited-marker");
  // No person at a terminal: the stager runs `!env` on the host by this
  // rule, which it reads itself.
  garuda::testing::Write(home_ + "/.garuda/settings.json",
                         R"json({"permissions": {"allow": ["bash(env)"]}})json");
  pid_t pid = Start(Argv({}), env, &in, &out, &err);
  ASSERT_TRUE(WriteAll(in.get(), "!env\n/exit\n").ok());
  in.Reset();
  std::string seen = ReadAll(out.get()).value_or("");
  seen += ReadAll(err.get()).value_or("");
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << seen;
  EXPECT_TRUE(absl::StrContains(seen, "GARUDA_TEST_MARKER=inherited-marker"))
      << seen;
  EXPECT_FALSE(absl::StrContains(seen, kKey)) << seen;
  EXPECT_FALSE(absl::StrContains(seen, "OPENAI_API_KEY=")) << seen;
}

// Ctrl-C at a terminal signals the whole foreground process group: the
// request in flight is cancelled, and the helpers (in groups of their own)
// live on, so the session ends cleanly rather than with a dead helper.
TEST_F(AgentProgramTest, CtrlCCancelsTheRequestAndSparesTheHelpers) {
  ProviderScript script;
  ScriptedReply held = Text("First words, then the server waits");
  held.set_fault(ScriptedReply::HOLD);
  *script.add_replies() = held;
  StartServer(script);
  UniqueFd in, out, err;
  pid_t pid = Start(Argv({"-p", "talk", "--output-format", "json"}), Env(false),
                    &in, &out, &err);
  in.Reset();
  // The request is on the wire once the server has recorded it.
  ASSERT_TRUE(Eventually([&] { return server_->request_count() > 0; }))
      << "the request did not reach the server within " << kDeadline;
  ASSERT_EQ(::kill(-pid, SIGINT), 0);
  std::string stdout_text = ReadAll(out.get()).value_or("");
  std::string stderr_text = ReadAll(err.get()).value_or("");
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << stderr_text;
  // A cancelled turn has its own exit status (4), apart from errors (1).
  EXPECT_EQ(WEXITSTATUS(status), 4) << stderr_text;
  EXPECT_TRUE(absl::StrContains(stderr_text, "Cancelled")) << stderr_text;
  EXPECT_FALSE(absl::StrContains(stderr_text, "signal 2")) << stderr_text;
  OneShotReport report;
  ASSERT_TRUE(ParseJsonMessage(stdout_text, "stdout", &report).ok())
      << stdout_text;
  EXPECT_EQ(report.stopped(), "cancelled");
  // The cancelled request's reservation stayed spent: the budgeter's
  // journal says so after the session.
  std::string budget =
      ReadFileToString(
          JoinPath(home_,
                   ".garuda/sessions/" + report.session_id() + "/budget.jsonl"))
          .value_or("");
  EXPECT_TRUE(absl::StrContains(budget, "settle")) << budget;
}

// --output-format belongs to one-shot runs: without -p it is a usage error
// (2) before anything starts. The control: the same flag with -p answers.
TEST_F(AgentProgramTest, OutputFormatWithoutPromptIsAUsageError) {
  ProviderScript script;
  *script.add_replies() = Text("Answered.");
  StartServer(script);
  for (const char* format : {"json", "text"}) {
    AgentRun run = RunAgent({"--output-format", format}, false, "hello\n");
    EXPECT_EQ(run.code, 2) << format << ": " << run.err;
    EXPECT_TRUE(absl::StrContains(run.err, "--output-format needs -p"))
        << run.err;
    EXPECT_FALSE(absl::StrContains(run.err, "| session ")) << run.err;
  }
  EXPECT_EQ(server_->request_count(), 0u);
  AgentRun control = RunAgent({"-p", "hi", "--output-format", "text"});
  EXPECT_EQ(control.code, 0) << control.err;
  EXPECT_EQ(control.out, "Answered.\n");
}

// A budget refusal ends a one-shot run with its own exit status (3), and the
// report says no usage was reported since no request was sent. The control:
// the same run with room in the budget answers and exits 0.
TEST_F(AgentProgramTest, BudgetRefusalHasItsOwnExitStatus) {
  ProviderScript script;
  *script.add_replies() = Text("Answered.");
  StartServer(script);
  garuda::testing::Write(home_ + "/.garuda/settings.json",
                         R"({"budget": {"tokenBudget": 10}})");
  AgentRun refused = RunAgent({"-p", "hello", "--output-format", "json"});
  EXPECT_EQ(refused.code, 3) << refused.err;
  EXPECT_TRUE(absl::StrContains(refused.err, "token budget")) << refused.err;
  EXPECT_EQ(server_->request_count(), 0u);
  OneShotReport report;
  ASSERT_TRUE(ParseJsonMessage(refused.out, "stdout", &report).ok())
      << refused.out;
  EXPECT_TRUE(absl::StartsWith(report.stopped(), "token budget")) << refused.out;
  EXPECT_EQ(report.usage().requests(), 0u);
  EXPECT_FALSE(report.usage().usage_reported()) << refused.out;

  garuda::testing::Write(home_ + "/.garuda/settings.json",
                         R"({"budget": {"tokenBudget": 1000000}})");
  AgentRun control = RunAgent({"-p", "hello", "--output-format", "json"});
  EXPECT_EQ(control.code, 0) << control.err;
  EXPECT_EQ(server_->request_count(), 1u);
}

// The JSON report: numbers as numbers, every field with its default, each
// call's output, a duration, and usage that is the budgeter's: a failed
// request's charge (its whole reservation, no usage came) is in it. The
// control within: the first answer alone reported 120 tokens, so a report
// without the failed request would charge 120, not the budgeter's figure.
TEST_F(AgentProgramTest, OneShotJsonUsageAgreesWithTheBudgeter) {
  ProviderScript script;
  ScriptedReply call = Bash("c1", "echo hi-from-bash");
  call.set_input_tokens(100);
  call.set_output_tokens(20);
  *script.add_replies() = call;
  ScriptedReply refused;
  refused.set_http_status(400);
  refused.set_error_type("invalid_request_error");
  refused.set_error_message("scripted refusal");
  *script.add_replies() = refused;
  StartServer(script);
  AgentRun run = RunAgent({"-p", "say hi", "--output-format", "json"});
  EXPECT_EQ(run.code, 1) << run.err;
  ASSERT_EQ(server_->request_count(), 2u);
  // Types and defaults, as the bytes show them.
  for (const char* piece :
       {"\"inputTokens\":100,", "\"outputTokens\":20,", "\"requests\":2,",
        "\"usageReported\":false", "\"isError\":true", "\"exitCode\":1",
        "\"durationMs\":", "\"answer\":\"Let me do that.\""}) {
    EXPECT_TRUE(absl::StrContains(run.out, piece)) << piece << " in " << run.out;
  }
  EXPECT_FALSE(absl::StrContains(run.out, "Tokens\":\"")) << run.out;
  OneShotReport report;
  ASSERT_TRUE(ParseJsonMessage(run.out, "stdout", &report).ok()) << run.out;
  EXPECT_TRUE(absl::StartsWith(report.stopped(), "model request failed"))
      << report.stopped();
  ASSERT_EQ(report.tool_calls_size(), 1);
  EXPECT_TRUE(absl::StrContains(report.tool_calls(0).output(), "hi-from-bash"))
      << run.out;
  EXPECT_FALSE(report.tool_calls(0).is_error());
  budget::BudgetStatus budget = BudgetStatusOf(report.session_id());
  EXPECT_EQ(static_cast<int64_t>(report.usage().charged_tokens()),
            budget.spent())
      << run.out;
  EXPECT_GT(report.usage().charged_tokens(), 120u) << run.out;
}

// Child agents in the real program (threads under the agent's seccomp
// filter, their own connections to the provider, their leases on the real
// budgeter): the JSON report shows each child, and its usage is the
// budgeter's for the session, the children's charges included. The
// control within: the parent's own requests alone charged 340 tokens. A
// resumed session counts what the children were charged.
TEST_F(AgentProgramTest, OneShotJsonShowsEachChildAndAgreesWithTheBudgeter) {
  ProviderScript script;
  ScriptedReply tasks = Text("Two children.");
  tasks.set_input_tokens(100);
  tasks.set_output_tokens(20);
  for (const char* name : {"first", "second"}) {
    provider::ScriptedToolCall* call = tasks.add_tool_calls();
    call->set_id(absl::StrCat("task_", name));
    call->set_name("task");
    call->set_arguments_json(absl::StrCat(
        R"({"description":")", name, R"( look","prompt":")", name,
        R"(-child-work"})"));
    call->set_argument_pieces(1);
  }
  *script.add_replies() = tasks;
  for (const char* name : {"first", "second"}) {
    ScriptedReply bash = Bash(absl::StrCat("b_", name),
                              absl::StrCat("echo from-", name));
    bash.add_when_body_contains("You are a child agent");
    bash.add_when_body_contains(absl::StrCat(name, "-child-work"));
    *script.add_replies() = bash;
    ScriptedReply done = Text(absl::StrCat(name, " child done"));
    done.set_input_tokens(300);
    done.set_output_tokens(40);
    done.add_when_body_contains("You are a child agent");
    done.add_when_body_contains(absl::StrCat(name, "-child-work"));
    *script.add_replies() = done;
  }
  ScriptedReply final_answer = Text("Both children answered.");
  final_answer.set_input_tokens(200);
  final_answer.set_output_tokens(20);
  *script.add_replies() = final_answer;
  *script.add_replies() = Text("Resumed.");
  StartServer(script);
  AgentRun run = RunAgent({"-p", "split", "--output-format", "json"});
  ASSERT_EQ(run.code, 0) << run.err << run.out;
  OneShotReport report;
  ASSERT_TRUE(ParseJsonMessage(run.out, "stdout", &report).ok()) << run.out;
  EXPECT_EQ(report.answer(), "Both children answered.");
  {
    auto schema = StreamJsonSchema();
    auto parsed = provider::ParseJson(run.out, "json report");
    ASSERT_TRUE(schema.ok() && parsed.ok()) << run.out;
    absl::Status valid = ValidateJsonAgainst(*parsed, *schema, "report");
    EXPECT_TRUE(valid.ok()) << valid.message() << "\nin: " << run.out;
  }
  ASSERT_EQ(report.tool_calls_size(), 2) << run.out;
  for (int i = 0; i < 2; ++i) {
    const std::string name = i == 0 ? "first" : "second";
    const ChildAgentReport& child = report.tool_calls(i).child();
    EXPECT_EQ(child.description(), name + " look");
    EXPECT_EQ(child.outcome(), "answered");
    ASSERT_EQ(child.tool_calls_size(), 1) << run.out;
    EXPECT_TRUE(absl::StrContains(child.tool_calls(0).output(), "from-" + name))
        << run.out;
    EXPECT_EQ(child.usage().requests(), 2u);
    EXPECT_EQ(report.tool_calls(i).output(), name + " child done");
  }
  budget::BudgetStatus budget = BudgetStatusOf(report.session_id());
  EXPECT_EQ(static_cast<int64_t>(report.usage().charged_tokens()),
            budget.spent())
      << run.out;
  EXPECT_EQ(report.usage().requests(), 6u);
  EXPECT_GT(report.usage().charged_tokens(), 340u);
  // The children's charges are journaled as child_debit records, each
  // attributed to its direct child.
  const std::string ledger = garuda::testing::Read(absl::StrCat(
      home_, "/.garuda/sessions/", report.session_id(), "/budget.jsonl"));
  EXPECT_TRUE(absl::StrContains(ledger, "childDebit")) << ledger;
  EXPECT_TRUE(absl::StrContains(ledger, R"("reportId":"main.1")")) << ledger;
  EXPECT_TRUE(absl::StrContains(ledger, R"("reportId":"main.2")")) << ledger;
  // --resume: the budgeter replays the children's charges.
  AgentRun resumed = RunAgent(
      {"--resume", report.session_id(), "-p", "again", "--output-format",
       "json"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  OneShotReport again;
  ASSERT_TRUE(ParseJsonMessage(resumed.out, "stdout", &again).ok())
      << resumed.out;
  EXPECT_EQ(BudgetStatusOf(report.session_id()).spent(),
            budget.spent() + again.usage().charged_tokens());
}

// A finished run prints the defaults too, and its usage is the budgeter's.
TEST_F(AgentProgramTest, OneShotJsonAnsweredHasEveryField) {
  ProviderScript script;
  ScriptedReply answer = Text("Done.");
  answer.set_input_tokens(50);
  answer.set_output_tokens(5);
  *script.add_replies() = answer;
  StartServer(script);
  AgentRun run = RunAgent({"-p", "hi", "--output-format", "json"});
  ASSERT_EQ(run.code, 0) << run.err;
  for (const char* piece :
       {"\"isError\":false", "\"stopped\":\"\"", "\"exitCode\":0",
        "\"toolCalls\":[]", "\"usageReported\":true", "\"requests\":1,",
        "\"chargedTokens\":55,"}) {
    EXPECT_TRUE(absl::StrContains(run.out, piece)) << piece << " in " << run.out;
  }
  OneShotReport report;
  ASSERT_TRUE(ParseJsonMessage(run.out, "stdout", &report).ok()) << run.out;
  EXPECT_EQ(BudgetStatusOf(report.session_id()).spent(), 55) << run.out;
}

// Text piped on standard input reaches the model after the prompt, in one
// marked block, cut at the cap with a line saying how much was left out.
// The control: the same run with nothing piped sends no block.
TEST_F(AgentProgramTest, PipedInputIsAddedToThePromptWithACap) {
  ProviderScript script;
  *script.add_replies() = Text("Reviewed.");
  *script.add_replies() = Text("Reviewed the big one.");
  *script.add_replies() = Text("Nothing piped.");
  StartServer(script);
  AgentRun run = RunAgent({"-p", "review this"}, false,
                          "--- a/notes.txt\n+++ b/notes.txt\n+piped-marker\n");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(run.out, "Reviewed.\n");
  ASSERT_EQ(server_->request_count(), 1u);
  const std::string sent = SentText(server_->requests()[0].body());
  EXPECT_TRUE(absl::StrContains(
      sent, "review this\n\n<stdin bytes=\"46\">\n--- a/notes.txt\n"))
      << sent;
  EXPECT_TRUE(absl::StrContains(sent, "+piped-marker\n</stdin>")) << sent;

  // Over the cap: the head, and the count of what was left out.
  std::string big(300 * 1024, 'x');
  AgentRun cut = RunAgent({"-p", "review this"}, false, big);
  ASSERT_EQ(cut.code, 0) << cut.err;
  ASSERT_EQ(server_->request_count(), 2u);
  const std::string cut_body = SentText(server_->requests()[1].body());
  EXPECT_TRUE(absl::StrContains(cut_body, "<stdin bytes=\"307200\">"));
  EXPECT_TRUE(absl::StrContains(cut_body, "cut at 262144 bytes; 45056 more"))
      << cut.err;
  EXPECT_FALSE(absl::StrContains(cut_body, std::string(262145, 'x')));
  EXPECT_TRUE(absl::StrContains(cut.err, "45056")) << cut.err;

  AgentRun none = RunAgent({"-p", "review this"});
  ASSERT_EQ(none.code, 0) << none.err;
  ASSERT_EQ(server_->request_count(), 3u);
  EXPECT_FALSE(absl::StrContains(server_->requests()[2].body(), "<stdin"));
}

// stream-json: one JSON object a line as the turn goes: the session, the
// answer's pieces, each call and its result, the usage after each request,
// the result last. The control: json prints one object and no events.
// stream-json: a task call's tool_result carries its child (description,
// outcome, tool calls, usage) when the child ends; a plain call's has none
// (the control).
TEST_F(AgentProgramTest, StreamJsonShowsEachChildWhenItEnds) {
  ProviderScript script;
  ScriptedReply tasks = Bash("b_parent", "echo parent-side");
  provider::ScriptedToolCall* call = tasks.add_tool_calls();
  call->set_id("task_1");
  call->set_name("task");
  call->set_arguments_json(
      R"({"description":"count lines","prompt":"streamed-child-work"})");
  call->set_argument_pieces(1);
  *script.add_replies() = tasks;
  ScriptedReply child = Text("three lines");
  child.add_when_body_contains("You are a child agent");
  *script.add_replies() = child;
  *script.add_replies() = Text("Done.");
  StartServer(script);
  AgentRun run = RunAgent({"-p", "go", "--output-format", "stream-json"});
  ASSERT_EQ(run.code, 0) << run.err;
  absl::StatusOr<google::protobuf::Value> schema = StreamJsonSchema();
  ASSERT_TRUE(schema.ok()) << schema.status();
  int with_child = 0, without_child = 0;
  for (absl::string_view line :
       absl::StrSplit(run.out, '\n', absl::SkipEmpty())) {
    absl::StatusOr<google::protobuf::Value> event =
        provider::ParseJson(line, "stream-json line");
    ASSERT_TRUE(event.ok()) << line;
    absl::Status valid = ValidateJson(*event, *schema);
    EXPECT_TRUE(valid.ok()) << valid.message() << "\nin: " << line;
    if (provider::StringMember(*event, "type") != "tool_result") continue;
    const google::protobuf::Value* child_event =
        provider::ObjectMember(*event, "child");
    if (child_event == nullptr) {
      ++without_child;
      continue;
    }
    ++with_child;
    EXPECT_EQ(provider::StringMember(*child_event, "description"),
              "count lines");
    EXPECT_EQ(provider::StringMember(*child_event, "outcome"), "answered");
    EXPECT_NE(provider::ObjectMember(*child_event, "usage"), nullptr) << line;
    EXPECT_EQ(provider::StringMember(*event, "output"), "three lines");
  }
  EXPECT_EQ(with_child, 1) << run.out;
  EXPECT_EQ(without_child, 1) << run.out;
}

TEST_F(AgentProgramTest, StreamJsonPrintsEventsAsTheTurnGoes) {
  ProviderScript script;
  *script.add_replies() = Bash("c1", "echo streamed-out");
  ScriptedReply done = Text("All done.");
  done.set_text_pieces(3);
  *script.add_replies() = done;
  StartServer(script);
  AgentRun run = RunAgent({"-p", "go", "--output-format", "stream-json"});
  ASSERT_EQ(run.code, 0) << run.err;
  std::vector<std::string> types;
  std::string text, tool_output, call_tool;
  google::protobuf::Value first, last;
  int text_events = 0;
  for (absl::string_view line :
       absl::StrSplit(run.out, '\n', absl::SkipEmpty())) {
    absl::StatusOr<google::protobuf::Value> event =
        provider::ParseJson(line, "stream-json line");
    ASSERT_TRUE(event.ok()) << line;
    std::string type = provider::StringMember(*event, "type");
    if (types.empty()) first = *event;
    last = *event;
    types.push_back(type);
    if (type == "text") {
      ++text_events;
      text += provider::StringMember(*event, "text");
    }
    if (type == "tool_call") call_tool = provider::StringMember(*event, "tool");
    if (type == "tool_result") {
      tool_output = provider::StringMember(*event, "output");
    }
  }
  ASSERT_GE(types.size(), 6u) << run.out;
  EXPECT_EQ(types.front(), "session") << run.out;
  EXPECT_FALSE(provider::StringMember(first, "sessionId").empty());
  EXPECT_EQ(provider::StringMember(first, "mode"), "direct");
  EXPECT_FALSE(provider::StringMember(first, "model").empty());
  EXPECT_EQ(types.back(), "result") << run.out;
  EXPECT_EQ(provider::StringMember(last, "answer"), "All done.");
  EXPECT_TRUE(absl::EndsWith(text, "All done.")) << text;
  EXPECT_GE(text_events, 3) << run.out;
  EXPECT_EQ(call_tool, "bash");
  EXPECT_TRUE(absl::StrContains(tool_output, "streamed-out")) << run.out;
  auto index = [&](const std::string& type) {
    return std::find(types.begin(), types.end(), type) - types.begin();
  };
  EXPECT_LT(index("tool_call"), index("tool_result")) << run.out;
  EXPECT_EQ(std::count(types.begin(), types.end(), "usage"), 2) << run.out;

  ProviderScript again;
  *again.add_replies() = Text("Once.");
  StartServer(again);
  AgentRun json = RunAgent({"-p", "go", "--output-format", "json"});
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_EQ(std::count(json.out.begin(), json.out.end(), '\n'), 1) << json.out;
  EXPECT_FALSE(absl::StrContains(json.out, "\"type\"")) << json.out;
}

// docs/stream-json.schema.json holds for every event of a real run (a
// command, text, usage, the result) and for the json report; it rejects
// what the writer must never print (the negative controls: a count as a
// string, a missing or unknown field, an unknown type); and it names every
// field of proto/agent_report.proto, so a new field without its schema
// fails here.
TEST_F(AgentProgramTest, StreamJsonEventsMatchTheSchema) {
  absl::StatusOr<google::protobuf::Value> schema = StreamJsonSchema();
  ASSERT_TRUE(schema.ok()) << schema.status();

  ProviderScript script;
  *script.add_replies() = Bash("c1", "echo schema-out");
  ScriptedReply done = Text("All done.");
  done.set_text_pieces(2);
  *script.add_replies() = done;
  StartServer(script);
  AgentRun run = RunAgent({"-p", "go", "--output-format", "stream-json"});
  ASSERT_EQ(run.code, 0) << run.err;
  std::set<std::string> types;
  google::protobuf::Value usage_event;
  for (absl::string_view line :
       absl::StrSplit(run.out, '\n', absl::SkipEmpty())) {
    absl::StatusOr<google::protobuf::Value> event =
        provider::ParseJson(line, "stream-json line");
    ASSERT_TRUE(event.ok()) << line;
    absl::Status valid = ValidateJson(*event, *schema);
    EXPECT_TRUE(valid.ok()) << valid.message() << "\nin: " << line;
    types.insert(provider::StringMember(*event, "type"));
    if (provider::StringMember(*event, "type") == "usage") usage_event = *event;
  }
  EXPECT_EQ(types, (std::set<std::string>{"session", "text", "tool_call",
                                          "tool_result", "usage", "result"}))
      << run.out;

  ProviderScript again;
  *again.add_replies() = Bash("c2", "echo json-out");
  *again.add_replies() = Text("Once.");
  StartServer(again);
  AgentRun json = RunAgent({"-p", "go", "--output-format", "json"});
  ASSERT_EQ(json.code, 0) << json.err;
  absl::StatusOr<google::protobuf::Value> report =
      provider::ParseJson(json.out, "json report");
  ASSERT_TRUE(report.ok()) << json.out;
  absl::Status valid = ValidateJsonAgainst(*report, *schema, "report");
  EXPECT_TRUE(valid.ok()) << valid.message() << "\nin: " << json.out;

  // Negative controls: what the schema must refuse.
  auto refused = [&](google::protobuf::Value event) {
    return !ValidateJson(event, *schema).ok();
  };
  ASSERT_TRUE(ValidateJson(usage_event, *schema).ok());
  google::protobuf::Value as_string = usage_event;
  (*as_string.mutable_struct_value()->mutable_fields())["inputTokens"]
      .set_string_value("12");
  EXPECT_TRUE(refused(as_string));
  google::protobuf::Value missing = usage_event;
  missing.mutable_struct_value()->mutable_fields()->erase("requests");
  EXPECT_TRUE(refused(missing));
  google::protobuf::Value extra = usage_event;
  (*extra.mutable_struct_value()->mutable_fields())["surprise"]
      .set_bool_value(true);
  EXPECT_TRUE(refused(extra));
  google::protobuf::Value unknown = usage_event;
  (*unknown.mutable_struct_value()->mutable_fields())["type"].set_string_value(
      "bogus");
  EXPECT_TRUE(refused(unknown));

  // Every field of the report protos is in the schema, required (but the
  // ones printed only when set: `child`, on task calls), and nothing else is
  // (but "type").
  auto fields_match = [&](const google::protobuf::Descriptor* message,
                          const std::string& def, bool with_type,
                          std::set<std::string> optional = {}) {
    const google::protobuf::Value* defs =
        provider::ObjectMember(*schema, "$defs");
    ASSERT_NE(defs, nullptr);
    const google::protobuf::Value* entry = provider::ObjectMember(*defs, def);
    ASSERT_NE(entry, nullptr) << def;
    const google::protobuf::Value* properties =
        provider::ObjectMember(*entry, "properties");
    ASSERT_NE(properties, nullptr) << def;
    std::set<std::string> in_proto, in_schema, required;
    for (int i = 0; i < message->field_count(); ++i) {
      in_proto.insert(message->field(i)->json_name());
    }
    if (with_type) in_proto.insert("type");
    for (const auto& [name, unused] : properties->struct_value().fields()) {
      in_schema.insert(name);
    }
    const google::protobuf::ListValue* listed =
        provider::ListMember(*entry, "required");
    ASSERT_NE(listed, nullptr) << def;
    for (const auto& name : listed->values()) {
      required.insert(name.string_value());
    }
    EXPECT_EQ(in_schema, in_proto)
        << "docs/stream-json.schema.json $defs/" << def << " and "
        << message->full_name() << " name different fields";
    std::set<std::string> always = in_proto;
    for (const std::string& name : optional) always.erase(name);
    EXPECT_EQ(required, always) << "$defs/" << def << " required";
  };
  fields_match(OneShotReport::descriptor(), "report", false);
  fields_match(OneShotReport::descriptor(), "result", true);
  // Printed only when set: a task call's child, a kept change list, an MCP
  // tool's call.
  fields_match(ToolCallReport::descriptor(), "toolCallReport", false,
               {"child", "keptChanges", "mcp"});
  fields_match(ToolCallReport::descriptor(), "tool_result", true,
               {"child", "keptChanges", "mcp"});
  fields_match(McpCallReport::descriptor(), "mcpCallReport", false);
  fields_match(ChildAgentReport::descriptor(), "childAgentReport", false);
  fields_match(KeptChangeSet::descriptor(), "keptChangeSet", false);
  fields_match(UsageReport::descriptor(), "usageReport", false);
  fields_match(UsageReport::descriptor(), "usage", true);
}

// Leaving a session says its id and the command that continues it; that
// command, run as printed, continues the same conversation (the control of
// the refusal at the end: the same --resume from another project).
TEST_F(AgentProgramTest, LeavingPrintsTheCommandToResumeInItsProject) {
  ProviderScript script;
  *script.add_replies() = Text("First answer.");
  StartServer(script);
  AgentRun run = RunAgent({}, false, "remember-this-line\n/exit\n");
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string marker = absl::StrCat(
      "; continue it with: garuda-agent --project ", project_, " --resume ");
  size_t at = run.err.find(marker);
  ASSERT_NE(at, std::string::npos) << run.err;
  std::string id = run.err.substr(at + marker.size());
  id = id.substr(0, id.find('\n'));
  ASSERT_FALSE(id.empty()) << run.err;
  EXPECT_TRUE(absl::StrContains(run.err, absl::StrCat("| session ", id)))
      << run.err;

  ProviderScript again;
  *again.add_replies() = Text("Back again.");
  StartServer(again);
  AgentRun resumed = RunAgent({"--resume", id, "-p", "and now?"});
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  ASSERT_EQ(server_->request_count(), 1u);
  EXPECT_TRUE(absl::StrContains(server_->requests()[0].body(),
                                "remember-this-line"));

  // From another project the same --resume refuses, naming both folders,
  // before any request.
  const std::string other = base_ + "/other";
  garuda::testing::MakeDir(other);
  AgentRun refused = RunIn(other, {"--resume", id, "-p", "elsewhere"});
  EXPECT_EQ(refused.code, 2) << refused.err;
  EXPECT_TRUE(absl::StrContains(
      refused.err, absl::StrCat("belongs to the project ", project_,
                                ", not to ", other)))
      << refused.err;
  EXPECT_EQ(server_->request_count(), 1u);
}

// `sessions` lists this project's sessions (id, start, turns, first
// prompt) and `--continue` resumes the last one. The control: another
// project lists none and has nothing to continue.
TEST_F(AgentProgramTest, SessionsAndContinueStayInTheirProject) {
  ProviderScript script;
  *script.add_replies() = Text("One.");
  *script.add_replies() = Text("Two.");
  *script.add_replies() = Text("Continued.");
  StartServer(script);
  ASSERT_EQ(RunAgent({"-p", "older session prompt"}).code, 0);
  AgentRun last = RunAgent({"-p", "latest session prompt\nsecond line"});
  ASSERT_EQ(last.code, 0) << last.err;

  AgentRun listed = RunAgent({"sessions"});
  ASSERT_EQ(listed.code, 0) << listed.err;
  std::vector<std::string> rows =
      absl::StrSplit(listed.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(rows.size(), 2u) << listed.out;
  EXPECT_TRUE(absl::EndsWith(rows[0], "  1 turn  older session prompt"))
      << rows[0];
  EXPECT_TRUE(absl::EndsWith(rows[1], "  1 turn  latest session prompt"))
      << rows[1];

  AgentRun continued = RunAgent({"--continue", "-p", "go on"});
  ASSERT_EQ(continued.code, 0) << continued.err;
  ASSERT_EQ(server_->request_count(), 3u);
  EXPECT_TRUE(absl::StrContains(server_->requests()[2].body(),
                                "latest session prompt"));
  EXPECT_FALSE(absl::StrContains(server_->requests()[2].body(),
                                 "older session prompt"));
  AgentRun after = RunAgent({"sessions"});
  EXPECT_TRUE(absl::StrContains(after.out, "  2 turns  latest session prompt"))
      << after.out;

  const std::string other = base_ + "/other";
  garuda::testing::MakeDir(other);
  AgentRun other_list = RunIn(other, {"sessions"});
  EXPECT_EQ(other_list.code, 0) << other_list.err;
  EXPECT_EQ(other_list.out, "");
  AgentRun refused = RunIn(other, {"--continue", "-p", "go on"});
  EXPECT_EQ(refused.code, 2) << refused.err;
  EXPECT_TRUE(absl::StrContains(refused.err, "--continue: no earlier session"))
      << refused.err;
  EXPECT_EQ(server_->request_count(), 3u);
}

TEST_F(AgentProgramTest, AKilledHelperStopsTheSession) {
  ProviderScript script;
  *script.add_replies() = Text("never");
  StartServer(script);
  UniqueFd in, out, err;
  pid_t pid = Start(Argv({}), Env(false), &in, &out, &err);
  // Wait for the first line: the helpers run by then.
  std::string seen;
  ASSERT_TRUE(ReadUntil(err.get(), "| session ", &seen))
      << "no first line within " << kDeadline << "; the agent wrote: " << seen;
  // The stager among the agent's children.
  std::string children =
      ReadFileToString(absl::StrCat("/proc/", pid, "/task/", pid, "/children"))
          .value_or("");
  pid_t stager = -1;
  for (absl::string_view word :
       absl::StrSplit(children, ' ', absl::SkipEmpty())) {
    int child = 0;
    if (!absl::SimpleAtoi(word, &child)) continue;
    std::string comm =
        ReadFileToString(absl::StrCat("/proc/", child, "/comm")).value_or("");
    if (absl::StartsWith(comm, "garuda-stager")) stager = child;
  }
  ASSERT_GT(stager, 0) << children;
  ASSERT_EQ(::kill(stager, SIGKILL), 0);
  // Dead (a zombie until the agent reaps it): its pidfd is readable now.
  ASSERT_TRUE(Eventually([&] {
    std::string stat =
        ReadFileToString(absl::StrCat("/proc/", stager, "/stat")).value_or("");
    std::vector<std::string> fields = absl::StrSplit(stat, ") ");
    return stat.empty() || (fields.size() > 1 && fields[1][0] == 'Z');
  })) << "garuda-stager " << stager << " was not dead within " << kDeadline;
  ASSERT_TRUE(WriteAll(in.get(), "hello\n").ok());
  in.Reset();
  std::string rest = ReadAll(err.get()).value_or("");
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << seen << rest;
  EXPECT_TRUE(absl::StrContains(rest, "garuda-stager")) << rest;
  EXPECT_TRUE(absl::StrContains(rest, "signal 9")) << rest;
  EXPECT_EQ(server_->request_count(), 0u);
}

}  // namespace
}  // namespace agent
}  // namespace garuda
