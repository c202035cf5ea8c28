// A hostile MCP server (hostile_server.py) started by garuda-stager serve,
// as garuda-agent starts one (StartMcpServer over the channel client of
// lib/staging/client.h), and the same server started plainly, as other
// agents start theirs: each of its attempts (write outside the project,
// read ~/.ssh and the agent's API key, reach the host's loopback) fails
// under the stager and succeeds in the negative control. Then staged mode's
// change lists, and the refusals of a server that cannot be sandboxed.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/changeset.h"
#include "lib/changeset/test_tree.h"
#include "lib/ipc/helper_process.h"
#include "lib/staging/client.h"
#include "proto/settings.pb.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace {

using ::garuda::testing::NewTempDir;
using ::garuda::testing::Read;
using ::garuda::testing::Write;

constexpr char kPython[] = "/usr/bin/python3";
constexpr char kKeyVariable[] = "GARUDA_HOSTILE_TEST_API_KEY";
const char* const kAttempts[] = {
    "write_home_dotfile", "write_beside_project", "write_garuda_folder",
    "read_ssh",           "read_api_key",         "connect_loopback",
};

std::string Runfile(const std::string& path) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/garuda/", path);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// Each attempt's word ("done" or "blocked") in the server's lines (its
// log, or a tool's text with its newlines escaped in JSON).
std::map<std::string, std::string> Outcomes(const std::string& text) {
  std::map<std::string, std::string> outcomes;
  std::vector<std::string> pieces = absl::StrSplit(text, "ATTEMPT ");
  for (size_t i = 1; i < pieces.size(); ++i) {
    std::vector<std::string> words =
        absl::StrSplit(pieces[i], absl::MaxSplits(' ', 2));
    if (words.size() >= 2) outcomes[words[0]] = words[1];
  }
  return outcomes;
}

// One JSON-RPC exchange over the server's pipes: a line out, a line back
// (10 s at most; the test fails rather than hangs).
class Pipes {
 public:
  Pipes(UniqueFd to, UniqueFd from)
      : to_(std::move(to)), from_(std::move(from)) {}
  std::string Call(int id, const std::string& method,
                   const std::string& params) {
    std::string line =
        absl::StrCat(R"({"jsonrpc":"2.0","id":)", id, R"(,"method":")", method,
                     R"(","params":)", params, "}\n");
    EXPECT_TRUE(WriteAll(to_.get(), line).ok());
    std::string reply;
    while (true) {
      size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        reply = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return reply;
      }
      struct pollfd p = {from_.get(), POLLIN, 0};
      if (::poll(&p, 1, 10000) != 1) {
        ADD_FAILURE() << "no answer to " << method;
        return "";
      }
      char chunk[65536];
      ssize_t n = ::read(from_.get(), chunk, sizeof chunk);
      if (n <= 0) {
        ADD_FAILURE() << "the server closed its stdout at " << method;
        return "";
      }
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }
  // initialize, then the `attempt` tool: its text.
  std::string Attempt() {
    std::string init = Call(1, "initialize",
                            R"({"protocolVersion":"2025-06-18",)"
                            R"("capabilities":{},"clientInfo":)"
                            R"({"name":"test","version":"1"}})");
    EXPECT_TRUE(absl::StrContains(init, "\"hostile\"")) << init;
    std::string listed = Call(2, "tools/list", "{}");
    EXPECT_TRUE(absl::StrContains(listed, "\"attempt\"")) << listed;
    return Call(3, "tools/call", R"({"name":"attempt","arguments":{}})");
  }

 private:
  UniqueFd to_, from_;
  std::string buffer_;
};

class HostileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is missing";
    root_ = NewTempDir("hostile");
    project_ = JoinPath(root_, "project");
    home_ = JoinPath(root_, "home");
    etc_ = JoinPath(root_, "etc");
    for (const std::string& dir : {project_, home_, etc_}) {
      ASSERT_TRUE(MakeDirectories(dir, 0755).ok());
    }
    ::setenv("HOME", home_.c_str(), 1);
    ::setenv("GARUDA_MANAGED_POLICY_DIR", etc_.c_str(), 1);
    ::unsetenv("GARUDA_TEST_ONLY_PRETEND_NO_SANDBOX");
    // The agent's environment, which the stager inherits: the key must
    // never reach a server.
    ::setenv(kKeyVariable, "sk-hostile-test-secret", 1);
    ASSERT_TRUE(MakeDirectories(JoinPath(home_, ".garuda"), 0700).ok());
    ASSERT_TRUE(MakeDirectories(JoinPath(home_, ".ssh"), 0700).ok());
    Write(JoinPath(home_, ".ssh/id_ed25519"), "PRIVATE KEY\n");
    // The server comes with the project (runfiles live under the real
    // home, which no sandbox shows).
    Write(JoinPath(project_, "tools/hostile_server.py"),
          Read(Runfile("tests/mcp/hostile/hostile_server.py")));
    Write(JoinPath(project_, "a.txt"), "old\n");

    listener_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    ASSERT_TRUE(listener_);
    struct sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(listener_.get(), reinterpret_cast<sockaddr*>(&address),
                     sizeof address),
              0);
    ASSERT_EQ(::listen(listener_.get(), 16), 0);
    socklen_t length = sizeof address;
    ASSERT_EQ(::getsockname(listener_.get(),
                            reinterpret_cast<sockaddr*>(&address), &length),
              0);
    port_ = ntohs(address.sin_port);
  }
  void TearDown() override {
    ::unsetenv("GARUDA_TEST_ONLY_PRETEND_NO_SANDBOX");
    if (stager_) stager_->Stop().IgnoreError();
  }

  McpServer Server(const std::string& name = "hostile") {
    McpServer server;
    server.set_name(name);
    server.set_source(McpServer::USER);
    server.set_source_file("test");
    McpServerSettings* d = server.mutable_definition();
    d->set_command(kPython);
    d->add_args("tools/hostile_server.py");
    d->add_args("--port");
    d->add_args(absl::StrCat(port_));
    d->add_args("--key-variable");
    d->add_args(kKeyVariable);
    return server;
  }

  CommandService& Stager(const std::string& mode,
                         const std::string& backend = "") {
    if (stager_) stager_->Stop().IgnoreError();
    ipc::HelperOptions options;
    options.argv = {Runfile("cmd/garuda-stager/garuda-stager"),
                    "serve",
                    "--channel-fd=3",
                    "--project",
                    project_,
                    "--mode",
                    mode,
                    "--session-id",
                    "s1"};
    if (!backend.empty()) {
      options.argv.push_back("--backend");
      options.argv.push_back(backend);
    }
    absl::StatusOr<std::unique_ptr<ipc::HelperProcess>> helper =
        ipc::HelperProcess::Spawn(options);
    EXPECT_TRUE(helper.ok()) << helper.status();
    stager_ = *std::move(helper);
    service_ = StagerChannelClient(stager_.get());
    return *service_;
  }

  // Starts `server` through the stager: its pipes (null, the failure
  // recorded, when it did not start) and what the stager said in `said`.
  std::unique_ptr<Pipes> Start(CommandService& stager, const McpServer& server,
                               stager::McpServerStarted* said = nullptr) {
    absl::StatusOr<CommandService::McpServerPipes> started =
        stager.StartMcpServer(server);
    if (!started.ok()) {
      ADD_FAILURE() << started.status();
      return nullptr;
    }
    if (said != nullptr) *said = started->started;
    return std::make_unique<Pipes>(std::move(started->to_server),
                                   std::move(started->from_server));
  }

  // The server's list since the last one: `path` alone.
  void ExpectListOf(CommandService& stager, const std::string& path) {
    absl::StatusOr<CommandService::Ran> changes =
        stager.McpServerChanges("hostile");
    ASSERT_TRUE(changes.ok()) << changes.status();
    ASSERT_TRUE(changes->change_set.has_value());
    ASSERT_EQ(changes->change_set->changes.size(), 1u);
    EXPECT_EQ(changes->change_set->changes[0].entry.path(), path);
  }

  // Whether the listener got a connection since the last call.
  bool Connected() {
    struct pollfd p = {listener_.get(), POLLIN, 0};
    if (::poll(&p, 1, 0) != 1) return false;
    UniqueFd accepted(
        ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    return static_cast<bool>(accepted);
  }

  std::vector<std::string> Escapes() {
    return {JoinPath(home_, ".hostile_profile"),
            JoinPath(root_, "hostile_beside.txt"),
            JoinPath(home_, ".garuda/hostile.txt")};
  }

  std::string root_, project_, home_, etc_;
  UniqueFd listener_;
  int port_ = 0;
  std::unique_ptr<ipc::HelperProcess> stager_;
  std::unique_ptr<CommandService> service_;
};

TEST_F(HostileTest, UnderTheStagerEveryAttemptFails) {
  CommandService& stager = Stager("direct");
  stager::McpServerStarted said;
  std::unique_ptr<Pipes> pipes = Start(stager, Server(), &said);
  ASSERT_TRUE(pipes);
  EXPECT_TRUE(said.sandboxed());
  const std::string log = said.stderr_log();
  EXPECT_EQ(log, JoinPath(home_, ".garuda/sessions/s1/mcp/hostile.stderr.log"));
  // Twice: the server lives across calls, and each call tries again.
  for (int call = 0; call < 2; ++call) {
    std::string text = pipes->Attempt();
    std::map<std::string, std::string> outcomes = Outcomes(text);
    for (const char* attempt : kAttempts) {
      EXPECT_EQ(outcomes[attempt], "blocked") << attempt << " in " << text;
    }
  }
  // Its start's attempts, in its log.
  ASSERT_TRUE(stager.StopMcpServer("hostile").ok());
  std::map<std::string, std::string> at_start = Outcomes(Read(log));
  for (const char* attempt : kAttempts) {
    EXPECT_EQ(at_start[attempt], "blocked") << attempt << " at the start";
  }
  for (const std::string& path : Escapes()) EXPECT_FALSE(Exists(path)) << path;
  EXPECT_FALSE(Connected());
  EXPECT_TRUE(stager.End().ok());
}

// The negative control: the same server, started as other agents start
// theirs (the person's environment, no sandbox), does all of it.
TEST_F(HostileTest, StartedPlainlyEveryAttemptSucceeds) {
  int in[2], out[2];
  ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  McpServer server = Server();
  std::vector<std::string> argv = {kPython};
  for (const std::string& arg : server.definition().args()) argv.push_back(arg);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    if (::chdir(project_.c_str()) != 0) ::_exit(127);
    std::vector<char*> args;
    for (std::string& arg : argv) args.push_back(arg.data());
    args.push_back(nullptr);
    ::execv(kPython, args.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  {
    Pipes pipes{UniqueFd(in[1]), UniqueFd(out[0])};
    std::string text = pipes.Attempt();
    std::map<std::string, std::string> outcomes = Outcomes(text);
    for (const char* attempt : kAttempts) {
      EXPECT_EQ(outcomes[attempt], "done") << attempt << " in " << text;
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  for (const std::string& path : Escapes()) EXPECT_TRUE(Exists(path)) << path;
  EXPECT_TRUE(Connected());
}

// Staged mode: what the server writes stays in its view, and comes back as
// the change list of a staged command, once per write.
TEST_F(HostileTest, StagedModeChangesComeBackAsAChangeList) {
  for (const char* backend : {"overlay", "copy"}) {
    SCOPED_TRACE(backend);
    CommandService& stager = Stager("staged", backend);
    std::unique_ptr<Pipes> pipes = Start(stager, Server());
    ASSERT_TRUE(pipes);
    pipes->Attempt();
    std::string wrote = pipes->Call(
        4, "tools/call",
        R"({"name":"write","arguments":{"path":"notes.txt","text":"hi\n"}})");
    EXPECT_TRUE(absl::StrContains(wrote, "wrote notes.txt")) << wrote;
    EXPECT_FALSE(Exists(JoinPath(project_, "notes.txt")));

    absl::StatusOr<CommandService::Ran> changes =
        stager.McpServerChanges("hostile");
    ASSERT_TRUE(changes.ok()) << changes.status();
    ASSERT_TRUE(changes->change_set.has_value());
    EXPECT_TRUE(changes->sealed_change_set);
    ASSERT_EQ(changes->change_set->changes.size(), 1u);
    EXPECT_EQ(changes->change_set->changes[0].entry.path(), "notes.txt");
    EXPECT_EQ(changes->result.changed_files(), 1u);
    EXPECT_EQ(changes->result.description(), "the server runs");

    // Since the last call: nothing new.
    changes = stager.McpServerChanges("hostile");
    ASSERT_TRUE(changes.ok()) << changes.status();
    EXPECT_FALSE(changes->change_set.has_value());
    // A second write is the next list's, alone.
    pipes->Call(
        5, "tools/call",
        R"({"name":"write","arguments":{"path":"b.txt","text":"b\n"}})");
    ExpectListOf(stager, "b.txt");
    EXPECT_TRUE(stager.End().ok());
  }
}

// A server that writes a file again after its first list was applied: no
// conflict (the project holds what its view held). The control: the person
// edited the file instead, and the second list is a conflict.
TEST_F(HostileTest, AnApplyOfItsOwnListIsNoConflictAPersonsEditIs) {
  for (bool person : {false, true}) {
    SCOPED_TRACE(person ? "the person edited" : "the list was applied");
    CommandService& stager = Stager("staged");
    std::unique_ptr<Pipes> pipes = Start(stager, Server());
    ASSERT_TRUE(pipes);
    auto write = [&](int id, const std::string& text) {
      pipes->Call(id, "tools/call",
                  absl::StrCat(R"({"name":"write","arguments":)",
                               R"({"path":"a.txt","text":")", text, "\"}}"));
    };
    write(1, "one");
    absl::StatusOr<CommandService::Ran> changes =
        stager.McpServerChanges("hostile");
    ASSERT_TRUE(changes.ok() && changes->change_set) << changes.status();
    EXPECT_EQ(changes->result.conflicts(), 0u);
    // As garuda-applier would leave it, or a person's own edit.
    Write(JoinPath(project_, "a.txt"), person ? "person" : "one");
    write(2, "two");
    changes = stager.McpServerChanges("hostile");
    ASSERT_TRUE(changes.ok() && changes->change_set) << changes.status();
    ASSERT_EQ(changes->change_set->changes.size(), 1u);
    EXPECT_EQ(changes->result.conflicts(), person ? 1u : 0u);
    EXPECT_EQ(changes->change_set->changes[0].entry.base().type() ==
                  FILE_TYPE_UNSPECIFIED,
              person);
    EXPECT_TRUE(stager.End().ok());
    Write(JoinPath(project_, "a.txt"), "old\n");
  }
}

// A project that commits a link and names a scope through it would make
// a place outside the view writable: refused. The control: the same scope
// without the link starts.
TEST_F(HostileTest, AStagedScopeThroughALinkIsRefused) {
  ASSERT_TRUE(MakeDirectories(JoinPath(root_, "elsewhere/x"), 0755).ok());
  ASSERT_EQ(::symlink(JoinPath(root_, "elsewhere").c_str(),
                      JoinPath(project_, "out").c_str()),
            0);
  CommandService& stager = Stager("staged");
  McpServer server = Server();
  server.mutable_definition()->add_write_scope("out/x");
  absl::StatusOr<CommandService::McpServerPipes> started =
      stager.StartMcpServer(server);
  ASSERT_FALSE(started.ok());
  EXPECT_TRUE(absl::StrContains(started.status().message(), "symbolic link"))
      << started.status();
  EXPECT_TRUE(stager.End().ok());
  ASSERT_EQ(::unlink(JoinPath(project_, "out").c_str()), 0);
  ASSERT_TRUE(MakeDirectories(JoinPath(project_, "out/x"), 0755).ok());
  CommandService& again = Stager("staged");
  EXPECT_TRUE(Start(again, server));
  EXPECT_TRUE(again.End().ok());
}

// Starting a server of a name that runs restarts it: the first one ends
// (its stdout closes), the second answers.
TEST_F(HostileTest, StartingAgainRestarts) {
  CommandService& stager = Stager("direct");
  std::unique_ptr<CommandService::McpServerPipes> first;
  {
    absl::StatusOr<CommandService::McpServerPipes> started =
        stager.StartMcpServer(Server());
    ASSERT_TRUE(started.ok()) << started.status();
    first =
        std::make_unique<CommandService::McpServerPipes>(*std::move(started));
  }
  std::unique_ptr<Pipes> second = Start(stager, Server());
  ASSERT_TRUE(second);
  char byte;
  EXPECT_EQ(::read(first->from_server.get(), &byte, 1), 0);
  EXPECT_TRUE(absl::StrContains(second->Attempt(), "ATTEMPT"));
  EXPECT_TRUE(stager.End().ok());
}

// The control of the above: in direct mode the write is in the project at
// once and no list comes.
TEST_F(HostileTest, DirectModeWritesTheProjectAndListsNothing) {
  CommandService& stager = Stager("direct");
  std::unique_ptr<Pipes> pipes = Start(stager, Server());
  ASSERT_TRUE(pipes);
  pipes->Attempt();
  pipes->Call(
      4, "tools/call",
      R"({"name":"write","arguments":{"path":"notes.txt","text":"hi\n"}})");
  EXPECT_EQ(Read(JoinPath(project_, "notes.txt")), "hi\n");
  absl::StatusOr<CommandService::Ran> changes =
      stager.McpServerChanges("hostile");
  ASSERT_TRUE(changes.ok()) << changes.status();
  EXPECT_FALSE(changes->change_set.has_value());
  EXPECT_TRUE(stager.End().ok());
}

// writeScope narrows the server's writes to its entries, in the project
// (direct mode) or in its view (staged mode, where the write comes back as
// the list).
TEST_F(HostileTest, WriteScopeNarrowsTheServersWrites) {
  ASSERT_TRUE(MakeDirectories(JoinPath(project_, "out"), 0755).ok());
  for (const char* mode : {"direct", "staged"}) {
    SCOPED_TRACE(mode);
    const std::string inside = absl::StrCat("out/", mode, ".txt");
    CommandService& stager = Stager(mode);
    McpServer server = Server();
    server.mutable_definition()->add_write_scope("out");
    std::unique_ptr<Pipes> pipes = Start(stager, server);
    ASSERT_TRUE(pipes);
    std::string refused = pipes->Call(
        4, "tools/call",
        R"({"name":"write","arguments":{"path":"notes.txt","text":"x"}})");
    EXPECT_TRUE(absl::StrContains(refused, "\"isError\": true")) << refused;
    std::string allowed =
        pipes->Call(5, "tools/call",
                    absl::StrCat(R"({"name":"write","arguments":{"path":")",
                                 inside, R"(","text":"x"}})"));
    EXPECT_TRUE(absl::StrContains(allowed, "wrote " + inside)) << allowed;
    EXPECT_FALSE(Exists(JoinPath(project_, "notes.txt")));
    if (std::string(mode) == "staged") {
      ExpectListOf(stager, inside);
      EXPECT_FALSE(Exists(JoinPath(project_, inside)));
    } else {
      EXPECT_TRUE(Exists(JoinPath(project_, inside)));
    }
    EXPECT_TRUE(stager.End().ok());
  }
}

// allowedDomains: the server reaches the hosts listed, through a proxy of
// its own, and no other (the control of the refusal is the allowed host,
// both names leading to the same listener).
TEST_F(HostileTest, AllowedDomainsGoThroughTheServersOwnProxy) {
  Write(JoinPath(home_, ".garuda/settings.json"),
        absl::StrCat(R"({"sandbox": {"allowedPorts": [)", port_, "]}}"));
  // The proxy's test seam: both names lead to the listener.
  ::setenv("GARUDA_TEST_PROXY_NAME_MAP",
           "allowed.test=127.0.0.1,denied.test=127.0.0.1", 1);
  CommandService& stager = Stager("direct");
  McpServer server = Server();
  server.mutable_definition()->add_allowed_domains("allowed.test");
  stager::McpServerStarted said;
  std::unique_ptr<Pipes> pipes = Start(stager, server, &said);
  ::unsetenv("GARUDA_TEST_PROXY_NAME_MAP");
  ASSERT_TRUE(pipes);
  EXPECT_TRUE(absl::StrContains(said.sandbox(), "network: only allowed.test"))
      << said.sandbox();
  std::string text = pipes->Attempt();
  // Its own loopback is not the host's: the direct connection still fails.
  EXPECT_EQ(Outcomes(text)["connect_loopback"], "blocked") << text;
  EXPECT_FALSE(Connected());
  // The proxy's status line for a tunnel to `host` at the listener's port.
  auto fetch = [&](int id, const std::string& host) {
    return pipes->Call(id, "tools/call",
                       absl::StrCat(R"({"name":"fetch","arguments":{"host":")",
                                    host, R"(","port":)", port_, "}}"));
  };
  std::string denied = fetch(4, "denied.test");
  EXPECT_FALSE(absl::StrContains(denied, "STATUS HTTP/1.1 200")) << denied;
  EXPECT_FALSE(Connected());
  std::string allowed = fetch(5, "allowed.test");
  EXPECT_TRUE(absl::StrContains(allowed, "STATUS HTTP/1.1 200")) << allowed;
  EXPECT_TRUE(Connected());
  EXPECT_TRUE(stager.End().ok());
}

// A server that floods stderr: the log keeps the first MiB and says the
// rest was dropped, and the server is not held up by it.
TEST_F(HostileTest, StderrIsCappedInItsLog) {
  CommandService& stager = Stager("direct");
  stager::McpServerStarted said;
  std::unique_ptr<Pipes> pipes = Start(stager, Server(), &said);
  ASSERT_TRUE(pipes);
  const std::string log = said.stderr_log();
  pipes->Attempt();
  std::string flooded = pipes->Call(
      4, "tools/call", R"({"name":"flood","arguments":{"bytes":3000000}})");
  EXPECT_TRUE(absl::StrContains(flooded, "wrote 3000000 bytes")) << flooded;
  EXPECT_TRUE(absl::StrContains(pipes->Call(5, "ping", "{}"), "\"result\""));
  ASSERT_TRUE(stager.StopMcpServer("hostile").ok());
  std::string kept = Read(log);
  EXPECT_GE(kept.size(), 1u << 20);
  EXPECT_LT(kept.size(), (1u << 20) + 200);
  EXPECT_TRUE(absl::StrContains(kept, "stderr past 1048576 bytes is dropped"));
  EXPECT_TRUE(stager.End().ok());
}

// The strict profile on a machine without the sandbox: no server starts,
// and the refusal names the server and why. The control: the same
// request with the sandbox working starts it.
TEST_F(HostileTest, StrictProfileRefusesAServerThatCannotBeSandboxed) {
  Write(JoinPath(etc_, "policy.json"), R"({"profile": "strict"})");
  ::setenv("GARUDA_TEST_ONLY_PRETEND_NO_SANDBOX", "1", 1);
  {
    CommandService& stager = Stager("direct");
    absl::StatusOr<CommandService::McpServerPipes> started =
        stager.StartMcpServer(Server());
    ASSERT_FALSE(started.ok());
    EXPECT_TRUE(absl::StrContains(started.status().message(),
                                  "MCP server \"hostile\" (test) is not "
                                  "started: it cannot be sandboxed here"))
        << started.status();
    EXPECT_TRUE(absl::StrContains(started.status().message(), "strict"))
        << started.status();
    EXPECT_TRUE(stager.End().ok());
  }
  ::unsetenv("GARUDA_TEST_ONLY_PRETEND_NO_SANDBOX");
  CommandService& stager = Stager("direct");
  absl::StatusOr<CommandService::McpServerPipes> started =
      stager.StartMcpServer(Server());
  EXPECT_TRUE(started.ok()) << started.status();
  EXPECT_TRUE(stager.End().ok());
}

// A program the sandbox does not show (here in the home folder, as
// ~/.local/bin or a version manager's shims would be): refused at once with
// why, never started elsewhere. The control: the same program in the
// project starts.
TEST_F(HostileTest, AProgramOutsideTheSandboxIsRefusedWithWhy) {
  const std::string script =
      absl::StrCat("#!", kPython, "\n",
                   Read(Runfile("tests/mcp/hostile/hostile_server.py")));
  Write(JoinPath(home_, "bin/hostile"), script);
  ASSERT_EQ(::chmod(JoinPath(home_, "bin/hostile").c_str(), 0755), 0);
  Write(JoinPath(project_, "bin/hostile"), script);
  ASSERT_EQ(::chmod(JoinPath(project_, "bin/hostile").c_str(), 0755), 0);
  CommandService& stager = Stager("direct");
  McpServer server = Server();
  server.mutable_definition()->set_command(JoinPath(home_, "bin/hostile"));
  absl::StatusOr<CommandService::McpServerPipes> started =
      stager.StartMcpServer(server);
  ASSERT_FALSE(started.ok());
  EXPECT_TRUE(absl::StrContains(started.status().message(),
                                "is outside what the sandbox shows"))
      << started.status();
  server.mutable_definition()->set_command(JoinPath(project_, "bin/hostile"));
  started = stager.StartMcpServer(server);
  EXPECT_TRUE(started.ok()) << started.status();
  EXPECT_TRUE(stager.End().ok());
}

}  // namespace
}  // namespace garuda
