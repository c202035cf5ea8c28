// Every program, in each mode that serves, on a kernel where its lockdown
// cannot be applied (acted out by no_lockdown_kernel: no Landlock, no
// seccomp filters): it refuses, naming what is missing and the fix. The
// negative controls: the same run with --accept-weaker-lockdown WHY goes
// on, and says that its lockdown is weaker.
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/ipc/channel.h"
#include "proto/netproxy_service.pb.h"

namespace garuda {
namespace {

std::string Runfile(const std::string& path) {
  return JoinPath(std::getenv("TEST_SRCDIR"), "garuda/" + path);
}

std::string Program(const std::string& name) {
  return Runfile("cmd/" + name + "/" + name);
}

struct Ran {
  int exit_code = -1;
  std::string err;
};

// Runs `argv` under no_lockdown_kernel with HOME in the test's folder,
// `input` on standard input and, with `channel`, one end of a socketpair
// on fd 3 whose other end is closed at once (a serve then ends when it
// reads its first request).
Ran RunWithoutLockdownKernel(
    std::vector<std::string> argv, const std::string& input = "",
    bool channel = false,
    const std::function<void(ipc::Channel&)>& first_requests = nullptr) {
  static int counter = 0;
  const std::string tmp = std::getenv("TEST_TMPDIR");
  const std::string err_path = absl::StrCat(tmp, "/stderr-", counter);
  const std::string in_path = absl::StrCat(tmp, "/stdin-", counter++);
  EXPECT_TRUE(WriteFileAtomically(in_path, input, 0600).ok());
  argv.insert(argv.begin(), Runfile("tests/lockdown/no_lockdown_kernel"));
  int sockets[2] = {-1, -1};
  if (channel) EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, sockets), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    int in = ::open(in_path.c_str(), O_RDONLY);
    int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int out = ::open("/dev/null", O_WRONLY);
    if (in < 0 || err < 0 || out < 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (channel) ::dup2(sockets[1], 3);
    ::setenv("HOME", tmp.c_str(), 1);
    ::alarm(120);  // a hang fails the test instead of the whole run
    std::vector<char*> args;
    for (std::string& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  if (channel) {
    ::close(sockets[1]);
    ipc::Channel ours{UniqueFd(sockets[0])};
    if (first_requests) first_requests(ours);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  Ran ran;
  ran.exit_code =
      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  absl::StatusOr<std::string> err = ReadRegularFile(err_path);
  ran.err = err.ok() ? *err : err.status().ToString();
  return ran;
}

std::string NewProject(const std::string& name) {
  std::string path = JoinPath(std::getenv("TEST_TMPDIR"), name);
  EXPECT_TRUE(MakeDirectories(path, 0700).ok());
  EXPECT_TRUE(
      WriteFileAtomically(JoinPath(path, "a.py"), "x = 1\n", 0644).ok());
  return path;
}

constexpr char kWeaker[] = "--accept-weaker-lockdown=old kernel in a test";

void ExpectRefused(const Ran& ran, const std::string& role) {
  EXPECT_NE(ran.exit_code, 0) << ran.err;
  EXPECT_TRUE(
      absl::StrContains(ran.err, absl::StrCat("cannot lock down the ", role)))
      << ran.err;
  EXPECT_TRUE(absl::StrContains(ran.err, "fix: ")) << ran.err;
  EXPECT_TRUE(absl::StrContains(ran.err, "--accept-weaker-lockdown WHY"))
      << ran.err;
}

void ExpectServedWeaker(const Ran& ran, int exit_code = 0) {
  EXPECT_EQ(ran.exit_code, exit_code) << ran.err;
  EXPECT_FALSE(absl::StrContains(ran.err, "cannot lock down")) << ran.err;
  EXPECT_TRUE(absl::StrContains(
      ran.err, "weaker lockdown (--accept-weaker-lockdown): no Landlock"))
      << ran.err;
  EXPECT_TRUE(absl::StrContains(ran.err, "accepted because: old kernel"))
      << ran.err;
}

constexpr char kEvent[] =
    "{\"kind\":\"command\",\"tool\":\"bash\",\"target\":\"make\"}\n";

TEST(FailClosedTest, AuditorRefuses) {
  std::string project = NewProject("auditor");
  for (bool serve : {false, true}) {
    SCOPED_TRACE(serve ? "serve" : "append");
    std::vector<std::string> argv = {Program("garuda-auditor"),
                                     serve ? "serve" : "append", "--project",
                                     project};
    if (serve) argv.push_back("--channel-fd=3");
    ExpectRefused(RunWithoutLockdownKernel(argv, kEvent, serve), "auditor");
  }
}

TEST(FailClosedTest, NegativeControlAuditorServesWeakerWithTheFlag) {
  std::string project = NewProject("auditor-weaker");
  for (bool serve : {false, true}) {
    SCOPED_TRACE(serve ? "serve" : "append");
    std::vector<std::string> argv = {Program("garuda-auditor"),
                                     serve ? "serve" : "append", "--project",
                                     project, kWeaker};
    if (serve) argv.push_back("--channel-fd=3");
    ExpectServedWeaker(RunWithoutLockdownKernel(argv, kEvent, serve));
  }
}

std::vector<std::string> BudgeterServe() {
  return {Program("garuda-budgeter"), "serve", "--channel-fd=3",
          "--session=fail-closed", "--limit=1000"};
}

TEST(FailClosedTest, BudgeterRefuses) {
  ExpectRefused(RunWithoutLockdownKernel(BudgeterServe(), "", true),
                "budgeter");
}

TEST(FailClosedTest, NegativeControlBudgeterServesWeakerWithTheFlag) {
  std::vector<std::string> argv = BudgeterServe();
  argv.push_back(kWeaker);
  ExpectServedWeaker(RunWithoutLockdownKernel(argv, "", true));
}

// Every subcommand of the applier that locks down: serve, apply, undo,
// recover, show, diff-dirs.
std::vector<std::vector<std::string>> ApplierModes(const std::string& project) {
  const std::string undo = JoinPath(std::getenv("TEST_TMPDIR"), "undo");
  const std::string applier = Program("garuda-applier");
  return {
      {applier, "serve", "--channel-fd=3", "--project", project, "--undo-root",
       undo, "--quiet"},
      {applier, "recover", "--project", project, "--undo-root", undo},
      {applier, "undo", "--list", "--project", project, "--undo-root", undo},
      {applier, "show", "--project", project},
      {applier, "apply", "--dry-run", "--project", project},
      {applier, "diff-dirs", "--project", project, "--staged", project},
  };
}

TEST(FailClosedTest, ApplierRefusesInEverySubcommand) {
  std::string project = NewProject("applier");
  for (const std::vector<std::string>& argv : ApplierModes(project)) {
    SCOPED_TRACE(argv[1]);
    ExpectRefused(RunWithoutLockdownKernel(argv, "", argv[1] == "serve"),
                  "applier");
  }
}

TEST(FailClosedTest, NegativeControlApplierServesWeakerWithTheFlag) {
  std::string project = NewProject("applier-weaker");
  for (std::vector<std::string> argv : ApplierModes(project)) {
    SCOPED_TRACE(argv[1]);
    argv.push_back(kWeaker);
    Ran ran = RunWithoutLockdownKernel(argv, "", argv[1] == "serve");
    // show and apply read an empty change list after their lockdown: a
    // usage of their own, not a refusal to lock down.
    EXPECT_FALSE(absl::StrContains(ran.err, "cannot lock down")) << ran.err;
    EXPECT_TRUE(absl::StrContains(
        ran.err, "weaker lockdown (--accept-weaker-lockdown): no Landlock"))
        << ran.err;
  }
}

TEST(FailClosedTest, AuditRefusesInVerifyAndWitness) {
  std::string project = NewProject("audit");
  std::string store = JoinPath(std::getenv("TEST_TMPDIR"), "witness-store");
  ExpectRefused(RunWithoutLockdownKernel(
                    {Program("garuda-audit"), "verify", "--project", project}),
                "audit reader");
  ExpectRefused(RunWithoutLockdownKernel(
                    {Program("garuda-audit"), "witness", "--store", store}),
                "audit reader");
}

TEST(FailClosedTest, NegativeControlAuditVerifiesWeakerWithTheFlag) {
  std::string project = NewProject("audit-weaker");
  std::string store = JoinPath(std::getenv("TEST_TMPDIR"), "witness-weaker");
  Ran verify = RunWithoutLockdownKernel(
      {Program("garuda-audit"), "verify", "--project", project, kWeaker});
  EXPECT_FALSE(absl::StrContains(verify.err, "cannot lock down"));
  EXPECT_TRUE(absl::StrContains(verify.err, "weaker lockdown")) << verify.err;
  ExpectServedWeaker(RunWithoutLockdownKernel(
      {Program("garuda-audit"), "witness", "--store", store, kWeaker}));
}

// The stager: serve (the sandbox builder and its staging guard), run in
// direct and in staged mode.
std::vector<std::vector<std::string>> StagerModes(const std::string& project) {
  const std::string stager = Program("garuda-stager");
  return {
      {stager, "serve", "--channel-fd=3", "--project", project, "--mode",
       "direct", "--quiet"},
      {stager, "serve", "--channel-fd=3", "--project", project, "--mode",
       "staged", "--quiet"},
      {stager, "run", "--project", project, "--mode", "direct", "--", "true"},
      {stager, "run", "--project", project, "--mode", "staged", "--", "true"},
  };
}

TEST(FailClosedTest, StagerRefusesInServeAndRun) {
  std::string project = NewProject("stager");
  for (const std::vector<std::string>& argv : StagerModes(project)) {
    SCOPED_TRACE(absl::StrCat(argv[1], " ", argv[5]));
    Ran ran = RunWithoutLockdownKernel(argv, "", argv[1] == "serve");
    EXPECT_NE(ran.exit_code, 0) << ran.err;
    // The sandbox builder has no Landlock by design: the missing seccomp
    // stops it; the staging guard misses both.
    EXPECT_TRUE(absl::StrContains(ran.err, "cannot lock down the st"))
        << ran.err;
    EXPECT_TRUE(absl::StrContains(ran.err, "fix: ")) << ran.err;
  }
}

TEST(FailClosedTest, NegativeControlStagerServesWeakerWithTheFlag) {
  std::string project = NewProject("stager-weaker");
  for (std::vector<std::string> argv : StagerModes(project)) {
    SCOPED_TRACE(absl::StrCat(argv[1], " ", argv[5]));
    argv.insert(argv.begin() + 2, kWeaker);
    Ran ran = RunWithoutLockdownKernel(argv, "", argv[1] == "serve");
    EXPECT_FALSE(absl::StrContains(ran.err, "cannot lock down")) << ran.err;
    EXPECT_TRUE(absl::StrContains(
        ran.err, "weaker lockdown (--accept-weaker-lockdown): no Landlock"))
        << ran.err;
    EXPECT_TRUE(absl::StrContains(ran.err, "; no seccomp; accepted because"))
        << ran.err;
  }
}

// The proxy locks down once Configure (its ports) has come.
void Configure(ipc::Channel& channel) {
  proxy::ProxyServiceRequest request;
  request.set_seq(1);
  request.mutable_configure()->add_allowed_domains("example.com");
  request.mutable_configure()->add_allowed_ports(443);
  EXPECT_TRUE(channel.Send(request).ok());
  // Its answer (an error after a refused lockdown, the end of the channel)
  // is read before the channel closes, so that the proxy never writes to a
  // closed one.
  proxy::ProxyServiceReply reply;
  channel.Receive(&reply).IgnoreError();
}

TEST(FailClosedTest, StagerProxyRefuses) {
  ExpectRefused(RunWithoutLockdownKernel({Program("garuda-stager"), "proxy",
                                          "--channel-fd=3"},
                                         "", true, Configure),
                "proxy");
}

TEST(FailClosedTest, NegativeControlStagerProxyServesWeakerWithTheFlag) {
  ExpectServedWeaker(RunWithoutLockdownKernel(
      {Program("garuda-stager"), "proxy", "--channel-fd=3", kWeaker}, "", true,
      Configure));
}

std::vector<std::string> AgentTool(const std::string& project) {
  return {Program("garuda-agent"),
          "tool",
          "find_references",
          "--project",
          project,
          "--path",
          "a.py",
          "--line",
          "1",
          "--column",
          "1"};
}

TEST(FailClosedTest, AgentCodeToolsRefuse) {
  ExpectRefused(RunWithoutLockdownKernel(AgentTool(NewProject("tool"))),
                "code tools");
}

TEST(FailClosedTest, NegativeControlAgentCodeToolsAnswerWeakerWithTheFlag) {
  std::vector<std::string> argv = AgentTool(NewProject("tool-weaker"));
  argv.push_back(kWeaker);
  ExpectServedWeaker(RunWithoutLockdownKernel(argv));
}

// A session: its helpers refuse first (they lock down as they start), so
// the session does not start either.
std::vector<std::string> AgentSession(const std::string& project) {
  const std::string helpers = JoinPath(std::getenv("TEST_TMPDIR"), "helpers");
  EXPECT_TRUE(MakeDirectories(helpers, 0700).ok());
  for (const char* helper : {"garuda-auditor", "garuda-budgeter",
                             "garuda-stager", "garuda-applier"}) {
    ::symlink(Program(helper).c_str(), JoinPath(helpers, helper).c_str());
  }
  return {Program("garuda-agent"), "--project", project,
          "--helpers-dir",         helpers,     "--plain"};
}

TEST(FailClosedTest, AgentSessionRefuses) {
  Ran ran =
      RunWithoutLockdownKernel(AgentSession(NewProject("session")), "/help\n");
  EXPECT_NE(ran.exit_code, 0) << ran.err;
  EXPECT_TRUE(absl::StrContains(ran.err, "cannot lock down the ")) << ran.err;
}

TEST(FailClosedTest, NegativeControlAgentSessionStartsWeakerWithTheFlag) {
  std::vector<std::string> argv = AgentSession(NewProject("session-weaker"));
  argv.push_back(kWeaker);
  Ran ran = RunWithoutLockdownKernel(argv, "/help\n");
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_FALSE(absl::StrContains(ran.err, "cannot lock down")) << ran.err;
  EXPECT_TRUE(absl::StrContains(
      ran.err, "garuda-agent: weaker lockdown (--accept-weaker-lockdown)"))
      << ran.err;
}


// The ACP front (`garuda-agent acp`) locks down once its launcher is
// forked, before it reads the editor's first line.
constexpr char kInitialize[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
    "\"params\":{\"protocolVersion\":1}}\n";

TEST(FailClosedTest, AcpFrontRefuses) {
  ExpectRefused(
      RunWithoutLockdownKernel({Program("garuda-agent"), "acp"}, kInitialize),
      "acp front");
}

TEST(FailClosedTest, NegativeControlAcpFrontServesWeakerWithTheFlag) {
  ExpectServedWeaker(RunWithoutLockdownKernel(
      {Program("garuda-agent"), "acp", kWeaker}, kInitialize));
}

// The ACP session worker (`garuda-agent acp-session`) locks down as the
// agent once its helpers run. Its helpers here are wrappers that accept a
// weaker lockdown themselves, so that the worker's own lockdown is the one
// that decides.
std::string WeakerHelpers() {
  const std::string helpers =
      JoinPath(std::getenv("TEST_TMPDIR"), "weaker-helpers");
  EXPECT_TRUE(MakeDirectories(helpers, 0700).ok());
  for (const char* helper : {"garuda-auditor", "garuda-budgeter",
                             "garuda-stager", "garuda-applier"}) {
    EXPECT_TRUE(WriteFileAtomically(
                    JoinPath(helpers, helper),
                    absl::StrCat("#!/bin/sh\nexec '", Program(helper),
                                 "' '--accept-weaker-lockdown=a helper in a "
                                 "test' \"$@\"\n"),
                    0755)
                    .ok());
  }
  return helpers;
}

// The front's side: session/new in `project`, its answer read, then the
// end of the socket (the session ends).
std::function<void(ipc::Channel&)> OpenAcpSession(const std::string& project,
                                                  std::string* answer) {
  return [project, answer](ipc::Channel& channel) {
    std::string line = absl::StrCat(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\","
        "\"params\":{\"cwd\":\"",
        project, "\",\"mcpServers\":[]}}\n");
    EXPECT_EQ(::write(channel.fd(), line.data(), line.size()),
              static_cast<ssize_t>(line.size()));
    // Up to the answer's end of line; session/update notifications may come
    // first.
    char byte;
    while (::read(channel.fd(), &byte, 1) == 1) {
      answer->push_back(byte);
      if (byte == '\n' && absl::StrContains(*answer, "\"id\":1")) break;
      if (byte == '\n') answer->clear();
    }
    ::shutdown(channel.fd(), SHUT_WR);
  };
}

std::vector<std::string> AcpWorker() {
  return {Program("garuda-agent"), "acp-session", "--channel_fd=3",
          absl::StrCat("--helpers_dir=", WeakerHelpers())};
}

TEST(FailClosedTest, AcpSessionWorkerRefuses) {
  std::string answer;
  Ran ran = RunWithoutLockdownKernel(
      AcpWorker(), "", true, OpenAcpSession(NewProject("acp-worker"), &answer));
  ExpectRefused(ran, "agent");
  // The front is told, as a JSON-RPC error of session/new.
  EXPECT_TRUE(absl::StrContains(answer, "\"error\"")) << answer;
  EXPECT_TRUE(absl::StrContains(answer, "cannot lock down the agent"))
      << answer;
}

TEST(FailClosedTest, NegativeControlAcpSessionWorkerServesWeakerWithTheFlag) {
  std::vector<std::string> argv = AcpWorker();
  argv.push_back(kWeaker);
  std::string answer;
  Ran ran = RunWithoutLockdownKernel(
      argv, "", true, OpenAcpSession(NewProject("acp-worker-weaker"), &answer));
  ExpectServedWeaker(ran);
  EXPECT_TRUE(absl::StrContains(answer, "\"sessionId\"")) << answer;
}

}  // namespace
}  // namespace garuda
