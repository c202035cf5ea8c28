// Dispatch of a model's call is a lookup in the session's tool table: a row
// added at run time is run by its own handler; a name not in the table is
// an error result for the model, and no handler runs.
#include "lib/agent/tool_run.h"

#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/agent/builtin_rows.h"
#include "lib/changeset/test_tree.h"
#include "lib/provider/json.h"

namespace garuda {
namespace agent {
namespace {

class Watcher : public Interaction {
 public:
  bool CanAsk() const override { return false; }
  void ShowText(absl::string_view) override {}
  void ShowRetry(absl::string_view) override {}
  void ShowToolCall(const ToolCallView& call) override {
    calls.push_back(call.summary);
  }
  void ShowToolOutcome(const ToolOutcomeView& outcome) override {
    outcomes.push_back(outcome);
  }
  void ShowNotice(absl::string_view) override {}
  PermissionAnswer AskPermission(const PermissionQuestion&) override {
    return PermissionAnswer::kNo;
  }
  std::vector<std::string> calls;
  std::vector<ToolOutcomeView> outcomes;
};

class Events : public AuditSink {
 public:
  absl::Status Record(const audit::AuditEvent& event) override {
    events.push_back(event);
    return absl::OkStatus();
  }
  absl::Status Close() override { return absl::OkStatus(); }
  std::vector<audit::AuditEvent> events;
};

struct Fixture {
  Fixture() {
    std::string root = testing::NewTempDir("tool_run") + "/p";
    testing::Write(root + "/a.txt", "a\n");
    project = *Project::Open(root);
    context.tools = &table;
    context.project = project.get();
    context.permissions = &permissions;
    context.interaction = &person;
    context.audit = &audit;
  }
  std::unique_ptr<Project> project;
  Permissions permissions;
  Watcher person;
  Events audit;
  ToolTable table;
  ToolContext context;
};

provider::ToolCall Call(const std::string& name, const std::string& args) {
  provider::ToolCall call;
  call.set_id("c1");
  call.set_name(name);
  call.set_arguments_json(args);
  return call;
}

ToolRow EchoRow(int* handled) {
  ToolRow row;
  row.spec.name = "echo";
  row.spec.description = "Say a word back.";
  row.spec.schema = [](ToolProfile) {
    return std::string(R"({"type": "object", "properties": {
      "word": {"type": "string"}}, "required": ["word"],
      "additionalProperties": false})");
  };
  row.spec.permission = {"echo", TargetArgument::kNone};
  row.handler = [handled](ToolRun& run) -> absl::StatusOr<ToolCallDone> {
    ++*handled;
    absl::StatusOr<std::optional<std::string>> decision =
        run.Decide(false, "Echo", "");
    if (!decision.ok()) return decision.status();
    if (!*decision) return run.TakeDone();
    ToolOutput output;
    output.content = provider::StringMember(run.input(), "word");
    return run.Finish(**decision, output, "echoed");
  };
  return row;
}

TEST(ToolRunTest, ARowAddedAtRunTimeRunsByItsHandler) {
  Fixture f;
  int handled = 0;
  ASSERT_TRUE(f.table.Register(EchoRow(&handled)).ok());
  absl::StatusOr<ToolCallDone> done =
      RunToolCall(f.context, Call("echo", R"({"word": "hello"})"));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(handled, 1);
  EXPECT_EQ(done->result.content(), "hello");
  EXPECT_FALSE(done->result.is_error());
  EXPECT_EQ(done->report.decision(), "allowed: no rule asks");
  ASSERT_EQ(f.person.outcomes.size(), 1u);
  EXPECT_EQ(f.person.outcomes[0].outcome, "echoed");
  ASSERT_FALSE(f.audit.events.empty());
  EXPECT_EQ(f.audit.events[0].tool(), "echo");
}

TEST(ToolRunTest, AnUnknownNameAnswersTheModelWithAnError) {
  Fixture f;
  int handled = 0;
  ASSERT_TRUE(f.table.Register(EchoRow(&handled)).ok());
  absl::StatusOr<ToolCallDone> done =
      RunToolCall(f.context, Call("rm", R"({"word": "hello"})"));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(handled, 0);
  EXPECT_TRUE(done->result.is_error());
  EXPECT_TRUE(absl::StrContains(done->result.content(),
                                "there is no tool named \"rm\""))
      << done->result.content();
  EXPECT_EQ(done->report.decision(), "input check failed");
  // Control: the same arguments to a name in the table run.
  EXPECT_TRUE(
      RunToolCall(f.context, Call("echo", R"({"word": "hello"})")).ok());
  EXPECT_EQ(handled, 1);
}

TEST(ToolRunTest, ABatchedRowIsNotRunOneCallAtATime) {
  Fixture f;
  f.table = BuiltinToolTable({});
  absl::StatusOr<ToolCallDone> done = RunToolCall(
      f.context, Call("task", R"({"description": "d", "prompt": "p"})"));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(done->result.is_error());
  EXPECT_TRUE(absl::StrContains(done->result.content(), "cannot be called"));
}

TEST(ToolRunTest, BuiltinReadRowRunsThroughTheTable) {
  Fixture f;
  f.table = BuiltinToolTable({});
  absl::StatusOr<ToolCallDone> done =
      RunToolCall(f.context, Call("read_file", R"({"path": "a.txt"})"));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_FALSE(done->result.is_error()) << done->result.content();
  EXPECT_TRUE(absl::StrContains(done->result.content(), "1\ta"))
      << done->result.content();
  ASSERT_EQ(f.person.calls.size(), 1u);
  EXPECT_EQ(f.person.calls[0], "read_file a.txt");
}

}  // namespace
}  // namespace agent
}  // namespace garuda
