// The allow list in a garuda-agent session (issue 21, point 2's "the person
// sees, the model gets, the audit log gets"): the real agent and helpers,
// the scripted model of tests/providers on loopback asking for a command
// that reaches an allowed and a refused host through the proxy.
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/changeset/test_tree.h"
#include "sandbox/sandbox.h"
#include "tests/agent/fakes.h"
#include "tests/netproxy/origin.h"
#include "tests/providers/scripted_server.h"

namespace garuda {
namespace {

using provider::ProviderScript;
using provider::testing::ScriptedServer;
using provider::testing::ServerKind;
using garuda::testing::Runfile;

// Every regular file under `dir`, concatenated.
std::string AllFiles(const std::string& dir) {
  RunOptions options;
  options.argv = {"/bin/sh", "-c", "find . -type f -exec cat {} +"};
  options.capture_output = true;
  auto ran = RunOnHost(options, dir);
  return ran.ok() ? ran->stdout_data : "";
}

class AgentAllowListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = garuda::testing::NewTempDir("agentnet");
    home_ = base_ + "/home";
    project_ = base_ + "/project";
    helpers_ = base_ + "/helpers";
    for (const std::string& dir : {home_, project_, helpers_, base_ + "/managed"}) {
      garuda::testing::MakeDir(dir);
    }
    garuda::testing::MakeDir(home_ + "/.garuda");
    for (const char* helper : {"garuda-auditor", "garuda-budgeter",
                               "garuda-stager", "garuda-applier"}) {
      garuda::testing::Symlink(Runfile(absl::StrCat("cmd/", helper, "/", helper)),
                               JoinPath(helpers_, helper));
    }
  }

  // One prompt whose model asks for `command`, then answers "done"; returns
  // what the model was sent after the command.
  std::string Session(const std::string& command, std::string* err) {
    ProviderScript script;
    *script.add_replies() = garuda::testing::ToolCallReply(
        "c1", "bash", absl::StrCat(R"({"command":")", command, R"("})"));
    *script.add_replies() = garuda::testing::TextReply("done");
    auto server = ScriptedServer::Start(ServerKind::kOpenAi, script);
    EXPECT_TRUE(server.ok()) << server.status();
    RunOptions options;
    options.argv = {Runfile("cmd/garuda-agent/garuda-agent"), "--project",
                    project_, "--helpers-dir", helpers_, "--provider", "openai",
                    "--model", "m", "--base-url", (*server)->base_url(), "-p",
                    "fetch it"};
    options.capture_output = true;
    options.wall_time_ms = 120000;
    ::setenv("HOME", home_.c_str(), 1);
    ::setenv("GARUDA_MANAGED_POLICY_DIR", (base_ + "/managed").c_str(), 1);
    ::setenv("OPENAI_API_KEY", "sk-test", 1);
    ::setenv("GARUDA_TEST_PROXY_NAME_MAP",
             "allowed.test=127.0.0.1,other.test=127.0.0.1", 1);
    auto ran = RunOnHost(options, project_);
    EXPECT_TRUE(ran.ok()) << ran.status();
    *err = ran.ok() ? ran->stdout_data + ran->stderr_data : "";
    EXPECT_EQ((*server)->request_count(), 2u) << *err;
    if ((*server)->request_count() < 2) return "";
    return (*server)->requests()[1].body();
  }

  std::string base_, home_, project_, helpers_;
  garuda::testing::Origin origin_;
};

TEST_F(AgentAllowListTest, TheModelThePersonAndTheAuditLogLearnOfARefusal) {
  garuda::testing::Write(
      home_ + "/.garuda/settings.json",
      absl::StrCat(R"({"sandbox":{"allowedDomains":["allowed.test"],)",
                   R"("allowedPorts":[)", origin_.port(), "]}}"));
  const std::string command =
      absl::StrCat("curl -sS http://allowed.test:", origin_.port(),
                   "/; curl -sS http://other.test:", origin_.port(), "/");
  std::string err;
  std::string sent = Session(command, &err);
  const std::string line = absl::StrCat("network: refused other.test:",
                                        origin_.port(),
                                        " (not in sandbox.allowedDomains)");
  EXPECT_TRUE(absl::StrContains(sent, "hello from origin")) << sent << err;
  EXPECT_TRUE(absl::StrContains(sent, line)) << sent;
  EXPECT_EQ(origin_.requests(), 1);
  std::string audit = AllFiles(home_ + "/.garuda/audit");
  EXPECT_TRUE(absl::StrContains(audit, "\"network\"")) << audit;
  EXPECT_TRUE(absl::StrContains(
      audit, absl::StrCat("other.test:", origin_.port(),
                          ": not in sandbox.allowedDomains")))
      << audit;
  EXPECT_TRUE(absl::StrContains(err, "network: only allowed.test")) << err;
  // The person's screen (a one-shot's notices) has the line too.
  EXPECT_TRUE(absl::StrContains(err, line)) << err;

  // Allowed hosts are audited only with sandbox.auditAllowedHosts.
  EXPECT_FALSE(absl::StrContains(
      audit, absl::StrCat("allowed.test:", origin_.port(), " (1x)")));
  garuda::testing::Write(
      home_ + "/.garuda/settings.json",
      absl::StrCat(R"({"sandbox":{"allowedDomains":["allowed.test"],)",
                   R"("auditAllowedHosts":true,"allowedPorts":[)",
                   origin_.port(), "]}}"));
  Session(command, &err);
  audit = AllFiles(home_ + "/.garuda/audit");
  EXPECT_TRUE(absl::StrContains(
      audit, absl::StrCat("allowed.test:", origin_.port(), " (1x)")))
      << audit;
  EXPECT_EQ(origin_.requests(), 2);

  // Control: without the list the command reaches nothing, and nothing is
  // refused by a proxy (there is none).
  garuda::testing::Write(home_ + "/.garuda/settings.json", "{}");
  sent = Session(command, &err);
  EXPECT_FALSE(absl::StrContains(sent, "hello from origin"));
  EXPECT_FALSE(absl::StrContains(sent, "network: refused"));
  EXPECT_EQ(origin_.requests(), 2);
}

TEST_F(AgentAllowListTest, StrictSessionDoesNotStartWhenEnforcementFails) {
  garuda::testing::Write(
      home_ + "/.garuda/settings.json",
      absl::StrCat(R"({"profile":"strict","sandbox":{"allowedDomains":["allowed.test"],)",
                   R"("allowedPorts":[)", origin_.port(), "]}}"));
  const std::string command =
      absl::StrCat("curl -sS http://allowed.test:", origin_.port(), "/");
  std::string err;
  std::string sent = Session(command, &err);
  EXPECT_TRUE(absl::StrContains(sent, "hello from origin")) << err;
  EXPECT_TRUE(absl::StrContains(err, "enforcement proven at start")) << err;
  // The seam: a proxy that lets every host through.
  ::setenv("GARUDA_TEST_PROXY_ALLOW_EVERYTHING", "1", 1);
  ProviderScript script;
  *script.add_replies() = garuda::testing::TextReply("never");
  auto server = ScriptedServer::Start(ServerKind::kOpenAi, script);
  ASSERT_TRUE(server.ok());
  RunOptions options;
  options.argv = {Runfile("cmd/garuda-agent/garuda-agent"), "--project",
                  project_, "--helpers-dir", helpers_, "--provider", "openai",
                  "--model", "m", "--base-url", (*server)->base_url(), "-p", "hi"};
  options.capture_output = true;
  options.wall_time_ms = 120000;
  auto ran = RunOnHost(options, project_);
  ::unsetenv("GARUDA_TEST_PROXY_ALLOW_EVERYTHING");
  ASSERT_TRUE(ran.ok());
  EXPECT_NE(ran->exit_code, 0);
  EXPECT_TRUE(absl::StrContains(ran->stderr_data,
                                "strict profile's network check failed"))
      << ran->stderr_data;
  EXPECT_EQ((*server)->request_count(), 0u);  // no model call at all
  EXPECT_EQ(origin_.requests(), 1);
}

}  // namespace
}  // namespace garuda
