// A session over the four real helper programs started by lib/agent's
// Helpers (garuda-auditor, garuda-budgeter, garuda-stager in staged mode,
// garuda-applier), a scripted provider on loopback and a person: the staged
// question, apply, /undo, discard, and an edit that meets a file changed
// meanwhile, all through the real channels. The applier asks its questions
// itself (--consent=terminal), on a pseudo-terminal where the test's
// person answers (tests/agent/pty_person.h).
#include <stdlib.h>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/agent/helpers.h"
#include "lib/agent/session.h"
#include "lib/base/files.h"
#include "lib/changeset/test_tree.h"
#include "lib/provider/client.h"
#include "lib/question/question.h"
#include "lib/tools/project.h"
#include "tests/agent/fakes.h"
#include "tests/agent/pty_person.h"
#include "tests/providers/scripted_server.h"

namespace garuda {
namespace agent {
namespace {

using garuda::testing::ScriptedPerson;
using provider::ProviderScript;
using provider::ScriptedReply;
using provider::testing::ScriptedServer;
using provider::testing::ServerKind;

using garuda::testing::Runfile;

ScriptedReply Call(const std::string& name, const std::string& arguments) {
  return garuda::testing::ToolCallReply("call_1", name, arguments);
}

ScriptedReply Text(const std::string& text) {
  return garuda::testing::TextReply(text);
}

class HelpersSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string base = garuda::testing::NewTempDir("helpers");
    home_ = base + "/home";
    root_ = base + "/project";
    garuda::testing::MakeDir(home_);
    garuda::testing::MakeDir(root_);
    garuda::testing::MakeDir(root_ + "/.garuda");
    garuda::testing::Write(root_ + "/.garuda/settings.json",
                           R"({"commands": {"mode": "staged"}})");
    garuda::testing::Write(root_ + "/notes.txt", "old line\n");
    ::setenv("HOME", home_.c_str(), 1);
    ::setenv("GARUDA_MANAGED_POLICY_DIR", (base + "/managed").c_str(), 1);
  }

  void Start(ProviderScript script) {
    auto server = ScriptedServer::Start(ServerKind::kAnthropic, script);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    auto project = Project::Open(root_);
    ASSERT_TRUE(project.ok()) << project.status();
    project_ = std::move(*project);

    HelpersOptions options;
    options.paths.auditor = Runfile("cmd/garuda-auditor/garuda-auditor");
    options.paths.budgeter = Runfile("cmd/garuda-budgeter/garuda-budgeter");
    options.paths.stager = Runfile("cmd/garuda-stager/garuda-stager");
    options.paths.applier = Runfile("cmd/garuda-applier/garuda-applier");
    options.project = project_->root();
    options.session_id = "helpers-session";
    options.token_limit = 100000;
    auto terminal = garuda::testing::PtyPerson::Open();
    ASSERT_TRUE(terminal.ok()) << terminal.status();
    terminal_ = std::move(*terminal);
    options.consent = "terminal";
    options.consent_terminal = terminal_->path();
    auto helpers = Helpers::Start(options);
    ASSERT_TRUE(helpers.ok()) << helpers.status();
    helpers_ = std::move(*helpers);
    auto description = helpers_->stager().Describe();
    ASSERT_TRUE(description.ok()) << description.status();
    ASSERT_EQ(description->mode(), "staged");

    provider::ClientOptions client;
    client.provider = "anthropic";
    client.model = "m";
    client.base_url = server_->base_url();
    client.max_tokens = 1000;
    client.min_output_tokens = 100;
    auto created = provider::ModelClient::Create(client);
    ASSERT_TRUE(created.ok()) << created.status();
    client_ = std::move(*created);

    SessionConfig config;
    config.session_id = "helpers-session";
    config.description = *description;
    SessionParts parts;
    parts.interaction = &person_;
    parts.project = project_.get();
    parts.permissions = &permissions_;
    parts.stager = &helpers_->stager();
    parts.applier = &helpers_->applier();
    parts.audit = &helpers_->audit();
    parts.budget = &helpers_->budget();
    parts.model = client_.get();
    parts.check_helpers = [this] { return helpers_->CheckAlive(); };
    auto session = Session::Start(config, parts);
    ASSERT_TRUE(session.ok()) << session.status();
    session_ = std::move(*session);
  }

  void TearDown() override {
    session_.reset();
    if (helpers_) {
      EXPECT_TRUE(helpers_->Stop().ok());
    }
    terminal_.reset();
  }

  // How many times the applier's terminal showed `prompt`.
  int Shown(const std::string& prompt) {
    std::string shown = terminal_->Shown();
    int count = 0;
    for (size_t at = shown.find(prompt); at != std::string::npos;
         at = shown.find(prompt, at + prompt.size())) {
      ++count;
    }
    return count;
  }

  std::string Notes() { return garuda::testing::Read(root_ + "/notes.txt"); }
  std::string Body(size_t i) { return server_->requests().at(i).body(); }

  std::string home_, root_;
  std::unique_ptr<ScriptedServer> server_;
  std::unique_ptr<Project> project_;
  std::unique_ptr<garuda::testing::PtyPerson> terminal_;
  std::unique_ptr<Helpers> helpers_;
  std::unique_ptr<provider::ModelClient> client_;
  Permissions permissions_;
  ScriptedPerson person_;
  CancelFlag cancel_;
  std::unique_ptr<Session> session_;
};

TEST_F(HelpersSessionTest, StagedCommandAppliedThenUndone) {
  ProviderScript script;
  *script.add_replies() =
      Call("bash", R"({"command":"echo new line > notes.txt; echo wrote"})");
  *script.add_replies() = Text("Applied.");
  Start(script);
  terminal_->Queue("a");
  auto outcome = session_->RunTurn("change it", &cancel_);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  // The applier asked, on its own terminal; the agent did not.
  ASSERT_EQ(Shown("[a]pply, [d]iscard"), 1) << terminal_->Shown();
  EXPECT_TRUE(absl::StrContains(terminal_->Shown(), "notes.txt"));
  EXPECT_TRUE(person_.change_questions.empty());
  EXPECT_EQ(Notes(), "new line\n");
  ASSERT_EQ(server_->request_count(), 2u);
  EXPECT_TRUE(absl::StrContains(Body(1), "wrote"));
  EXPECT_TRUE(absl::StrContains(Body(1), kAppliedLine));

  auto undo = session_->HandleLine("/undo", &cancel_);
  ASSERT_TRUE(undo.ok()) << undo.status();
  EXPECT_EQ(Notes(), "old line\n") << person_.AllNotices();
}

TEST_F(HelpersSessionTest, StagedCommandDiscarded) {
  ProviderScript script;
  *script.add_replies() = Call("bash", R"({"command":"rm notes.txt"})");
  *script.add_replies() = Text("Discarded.");
  Start(script);
  terminal_->Queue("d");
  auto outcome = session_->RunTurn("remove it", &cancel_);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(Shown("[a]pply, [d]iscard"), 1) << terminal_->Shown();
  EXPECT_EQ(Notes(), "old line\n");
  EXPECT_TRUE(absl::StrContains(Body(1), kDiscardedLine));
}

TEST_F(HelpersSessionTest, EditOfAFileChangedMeanwhileIsAConflict) {
  ProviderScript script;
  *script.add_replies() =
      Call("edit_file",
           R"({"path":"notes.txt","old_string":"old","new_string":"model"})");
  *script.add_replies() = Text("Conflict seen.");
  Start(script);
  terminal_->OnQuestion([this](const std::string&) {
    garuda::testing::Write(root_ + "/notes.txt", "person's line\n");
  });
  terminal_->Queue("y");
  auto outcome = session_->RunTurn("edit it", &cancel_);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(Notes(), "person's line\n");
  ASSERT_EQ(outcome->tool_calls.size(), 1u);
  EXPECT_TRUE(outcome->tool_calls[0].is_error());
  EXPECT_TRUE(absl::StrContains(Body(1), "onflict")) << Body(1);
}

TEST_F(HelpersSessionTest, EditAppliedThroughTheApplier) {
  ProviderScript script;
  *script.add_replies() =
      Call("edit_file",
           R"({"path":"notes.txt","old_string":"old","new_string":"model"})");
  *script.add_replies() = Text("Edited.");
  Start(script);
  terminal_->Queue("y");
  auto outcome = session_->RunTurn("edit it", &cancel_);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(Notes(), "model line\n");
  EXPECT_FALSE(outcome->tool_calls.at(0).is_error())
      << outcome->tool_calls.at(0).outcome();
  // The applier asked with the diff; the agent only proposed.
  EXPECT_EQ(Shown("Allow? [y]es, [s]ession, [n]o: "), 1) << terminal_->Shown();
  EXPECT_TRUE(absl::StrContains(terminal_->Shown(), "Edit notes.txt"));
  EXPECT_TRUE(person_.permission_questions.empty());
  EXPECT_EQ(outcome->tool_calls.at(0).decision(), "asked: yes");
}

// The negative control of the one above: the person says no at the
// applier's question, and the file stays as it was.
TEST_F(HelpersSessionTest, EditRefusedAtTheAppliersQuestion) {
  ProviderScript script;
  *script.add_replies() =
      Call("edit_file",
           R"({"path":"notes.txt","old_string":"old","new_string":"model"})");
  *script.add_replies() = Text("Not edited.");
  Start(script);
  terminal_->Queue("n");
  auto outcome = session_->RunTurn("edit it", &cancel_);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(Notes(), "old line\n");
  EXPECT_EQ(Shown("Allow? [y]es, [s]ession, [n]o: "), 1) << terminal_->Shown();
  ASSERT_EQ(outcome->tool_calls.size(), 1u);
  EXPECT_TRUE(outcome->tool_calls[0].is_error());
  EXPECT_EQ(outcome->tool_calls[0].decision(), "asked: no");
}

}  // namespace
}  // namespace agent
}  // namespace garuda
