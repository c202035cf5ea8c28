#include "lib/agent/mcp_servers.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/agent/command_tool.h"
#include "lib/agent/tool_run.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"
#include "lib/provider/json.h"
#include "lib/question/question.h"
#include "lib/tools/result.h"
#include "lib/tools/run.h"

namespace garuda {
namespace agent {
namespace {

using google::protobuf::Value;

// What the model reads of a server's description of a tool: enough to
// choose it, not a place for a server to fill the context.
constexpr size_t kDescriptionChars = 2048;
constexpr size_t kSummaryArgumentChars = 160;

std::string RuleChars(absl::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' &&
        c != '-') {
      c = '_';
    }
  }
  return out;
}

std::string Seconds(absl::Duration d) {
  return absl::StrCat(absl::ToInt64Seconds(d), " s");
}

// The server's input schema as a table row takes it (an object with an
// object "properties"), or why it cannot be offered. A tool without
// parameters may leave "properties" out.
absl::StatusOr<std::string> RowSchema(const mcp::Tool& tool) {
  const Value& schema = tool.input_schema;
  if (schema.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError("its input schema is not a JSON object");
  }
  Value copy = schema;
  auto& fields = *copy.mutable_struct_value()->mutable_fields();
  auto type = fields.find("type");
  if (type != fields.end() &&
      (type->second.kind_case() != Value::kStringValue ||
       type->second.string_value() != "object")) {
    return absl::InvalidArgumentError(
        "its input schema's \"type\" is not \"object\"");
  }
  auto properties = fields.find("properties");
  if (properties == fields.end()) {
    fields["properties"] = provider::JsonObject();
  } else if (properties->second.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(
        "its input schema's \"properties\" is not an object");
  }
  return provider::ToJson(copy);
}

std::string HintsLine(const mcp::Tool& tool) {
  if (tool.read_only_hint) {
    return "The server says this tool only reads (readOnlyHint); that is the "
           "server's own word, so Garuda asks as for any tool.";
  }
  return "A tool of an MCP server: it acts with the server's access (its "
         "sandbox).";
}

}  // namespace

struct McpServers::ToolState {
  std::string model_name;
  std::string rule;
  std::string server_rule;
  mcp::Tool tool;  // as last listed (under the servers' mutex)
  // Read by the table without the servers' mutex (another agent's call may
  // hold it for minutes).
  std::atomic<bool> listed{false};
  std::atomic<bool> offered{false};
  absl::Mutex schema_mu;
  std::string schema ABSL_GUARDED_BY(schema_mu);
};

struct McpServers::Server {
  McpServerEntry entry;
  McpState state = McpState::kFailed;
  std::string last_error;
  int restarts = 0;  // automatic ones
  std::unique_ptr<mcp::Client> client;
  // By model name; kept across listings so that rows stay attached.
  std::map<std::string, std::shared_ptr<ToolState>> tools;
  std::vector<std::string> problems;

  void SetOffered() {
    for (auto& [name, tool] : tools) {
      tool->offered = state == McpState::kReady && tool->listed;
    }
  }
};

const char* McpStateName(McpState state) {
  switch (state) {
    case McpState::kReady:
      return "ready";
    case McpState::kFailed:
      return "failed";
    case McpState::kDown:
      return "down";
    case McpState::kSkipped:
      return "skipped";
  }
  return "failed";
}

std::string McpToolRule(absl::string_view server, absl::string_view tool) {
  return absl::StrCat(kMcpRulePrefix, RuleChars(server), "__", RuleChars(tool));
}

std::string McpServerRule(absl::string_view server) {
  return absl::StrCat(kMcpRulePrefix, RuleChars(server));
}

McpServers::McpServers(McpOptions options) : options_(std::move(options)) {}

McpServers::~McpServers() {
  absl::MutexLock lock(&mu_);
  for (auto& server : servers_) {
    if (server->client) server->client->Close();
  }
}

McpServers::Server* McpServers::Find(const std::string& name) const {
  for (const auto& server : servers_) {
    if (server->entry.name == name) return server.get();
  }
  return nullptr;
}

void McpServers::Start(std::vector<McpServerEntry> entries) {
  absl::MutexLock lock(&mu_);
  for (McpServerEntry& entry : entries) {
    auto server = std::make_unique<Server>();
    server->entry = std::move(entry);
    Server& s = *server;
    servers_.push_back(std::move(server));
    absl::Status connected = Connect(s);
    if (connected.ok()) {
      notices_.push_back(absl::StrCat("MCP server ", s.entry.name, ": ",
                                      s.tools.size(),
                                      s.tools.size() == 1 ? " tool" : " tools",
                                      " (", s.entry.sandbox, ")"));
    } else {
      notices_.push_back(absl::StrCat("MCP server ", s.entry.name,
                                      " did not start: ", s.last_error,
                                      "; the session goes on without it"));
    }
    for (const std::string& problem : s.problems) {
      notices_.push_back(
          absl::StrCat("MCP server ", s.entry.name, ": ", problem));
    }
  }
}

void McpServers::Skip(const std::string& name, const std::string& origin,
                      const std::string& why) {
  absl::MutexLock lock(&mu_);
  auto server = std::make_unique<Server>();
  server->entry.name = name;
  server->entry.origin = origin;
  server->state = McpState::kSkipped;
  server->last_error = why;
  servers_.push_back(std::move(server));
  notices_.push_back(absl::StrCat("MCP server ", name, " skipped: ", why));
}

std::vector<std::string> McpServers::TakeNotices() {
  absl::MutexLock lock(&mu_);
  return std::exchange(notices_, {});
}

absl::Status McpServers::Connect(Server& server) {
  const McpServerEntry& entry = server.entry;
  if (server.client) server.client->Close();
  server.client.reset();
  server.state = McpState::kFailed;
  auto fail = [&](const absl::Status& status) {
    server.last_error = std::string(status.message());
    server.SetOffered();
    return status;
  };
  if (!entry.start) {
    return fail(absl::FailedPreconditionError("nothing can start it"));
  }
  const absl::Time began = absl::Now();
  absl::StatusOr<McpStarted> started = entry.start();
  if (!started.ok()) return fail(started.status());
  if (!started->sandbox.empty()) server.entry.sandbox = started->sandbox;
  mcp::ConnectOptions connect;
  connect.root_dir = options_.root_dir;
  connect.start_timeout = entry.start_timeout;
  connect.client_version = options_.client_version;
  absl::StatusOr<std::unique_ptr<mcp::Client>> client =
      mcp::Client::Connect(entry.name, std::move(started->transport), connect);
  if (!client.ok()) return fail(client.status());
  server.client = *std::move(client);
  mcp::ToolList list;
  if (server.client->server_info().has_tools) {
    // The start and the first listing share one limit.
    absl::Duration left = entry.start_timeout - (absl::Now() - began);
    if (left <= absl::ZeroDuration()) {
      return fail(absl::DeadlineExceededError(
          absl::StrCat("mcp server '", entry.name, "' took more than ",
                       Seconds(entry.start_timeout), " to start")));
    }
    absl::StatusOr<mcp::ToolList> listed = server.client->ListTools(left);
    if (!listed.ok()) return fail(listed.status());
    list = *std::move(listed);
  }
  server.state = McpState::kReady;
  server.last_error.clear();
  SetTools(server, std::move(list));
  return absl::OkStatus();
}

void McpServers::SetTools(Server& server, mcp::ToolList list) {
  server.problems = std::move(list.problems);
  for (auto& [name, tool] : server.tools) tool->listed = false;
  for (mcp::Tool& tool : list.tools) {
    std::string model_name =
        mcp::ModelToolName(server.entry.name, tool.name, options_.name_limit);
    absl::StatusOr<std::string> schema = RowSchema(tool);
    if (!schema.ok()) {
      server.problems.push_back(
          absl::StrCat("the tool ", tool.name,
                       " is not offered: ", schema.status().message()));
      continue;
    }
    bool taken = false;
    for (const auto& other : servers_) {
      if (other.get() == &server) continue;
      auto found = other->tools.find(model_name);
      if (found != other->tools.end() && found->second->listed) taken = true;
    }
    if (taken) {
      server.problems.push_back(
          absl::StrCat("the tool ", tool.name, " is not offered: its name ",
                       model_name, " is another server's tool's"));
      continue;
    }
    std::shared_ptr<ToolState>& state = server.tools[model_name];
    if (state == nullptr) {
      state = std::make_shared<ToolState>();
      state->model_name = model_name;
      state->rule = McpToolRule(server.entry.name, tool.name);
      state->server_rule = McpServerRule(server.entry.name);
    } else if (state->listed) {
      server.problems.push_back(
          absl::StrCat("the tool ", tool.name, " is not offered: its name ",
                       model_name, " is also another of its tools'"));
      continue;
    }
    {
      absl::MutexLock lock(&state->schema_mu);
      state->schema = *std::move(schema);
    }
    state->tool = std::move(tool);
    state->listed = true;
  }
  server.SetOffered();
}

ToolRow McpServers::RowFor(Server& server, std::shared_ptr<ToolState> tool) {
  ToolSpec spec;
  spec.name = tool->model_name;
  const mcp::Tool& listed = tool->tool;
  std::string about =
      listed.description.empty() ? listed.title : listed.description;
  if (about.size() > kDescriptionChars) {
    about = CapToolResult(about, kDescriptionChars);
  }
  spec.description =
      absl::StrCat("A tool of the MCP server '", server.entry.name, "' (",
                   listed.name, "). ", about);
  spec.schema = [tool](ToolProfile) {
    absl::MutexLock lock(&tool->schema_mu);
    return tool->schema;
  };
  // A read-only hint only groups the call in an editor's view; the
  // permission ignores it.
  spec.kind = listed.read_only_hint ? ToolKind::kRead : ToolKind::kOther;
  spec.permission = {tool->rule, TargetArgument::kNone, tool->server_rule};
  std::string prefix = absl::StrCat(server.entry.name, ": ", listed.name);
  auto line = [prefix](const Value& arguments) -> std::optional<std::string> {
    std::string shown = provider::ToJson(arguments);
    if (shown == "{}") return prefix;
    return absl::StrCat(prefix, " ", OneLineText(shown, kSummaryArgumentChars));
  };
  spec.summary = line;
  spec.title = line;
  ToolRow row;
  row.spec = std::move(spec);
  Server* s = &server;
  row.handler = [this, s, tool](ToolRun& run) { return Call(run, s, tool); };
  row.offered = [tool] { return tool->offered.load(); };
  return row;
}

absl::Status McpServers::AddRows(ToolTable& table) {
  absl::MutexLock lock(&mu_);
  for (auto& server : servers_) {
    Server& s = *server;
    if (s.state != McpState::kReady || !s.client) continue;
    // What the server sent since (a list_changed, a ping) is read now; a
    // server found stopped is restarted at its next call.
    s.client->Poll().IgnoreError();
    if (s.client->broken().ok() && s.client->ToolsChanged()) {
      absl::StatusOr<mcp::ToolList> listed =
          s.client->ListTools(s.entry.start_timeout);
      if (listed.ok()) {
        SetTools(s, *std::move(listed));
      } else {
        s.last_error = absl::StrCat("listing its changed tools: ",
                                    listed.status().message());
      }
    }
    for (auto& [name, tool] : s.tools) {
      if (!tool->listed || table.Find(name) != nullptr) continue;
      absl::Status registered = table.Register(RowFor(s, tool));
      if (!registered.ok()) {
        tool->listed = false;
        tool->offered = false;
        s.problems.push_back(
            absl::StrCat("the tool ", tool->tool.name,
                         " is not offered: ", registered.message()));
      }
    }
  }
  return absl::OkStatus();
}

bool McpServers::RestartAfterStop(Server& server, const absl::Status& why) {
  std::string stopped(why.message());
  if (server.restarts >= 1) {
    server.state = McpState::kDown;
    server.last_error =
        absl::StrCat("stopped again after its one restart: ", stopped);
    if (server.client) server.client->Close();
    server.SetOffered();
    return false;
  }
  ++server.restarts;
  absl::Status restarted = Connect(server);
  if (!restarted.ok()) {
    server.state = McpState::kDown;
    server.last_error =
        absl::StrCat("stopped (", stopped,
                     "), and its restart failed: ", restarted.message());
    server.SetOffered();
    return false;
  }
  server.last_error = absl::StrCat("stopped and was restarted: ", stopped);
  return true;
}

absl::StatusOr<ToolCallDone> McpServers::Call(ToolRun& run, Server* server,
                                              std::shared_ptr<ToolState> tool) {
  absl::MutexLock lock(&mu_);
  const ToolContext& c = run.context();
  const std::string& name = server->entry.name;
  const std::string tool_name = tool->tool.name;
  McpCallReport report;
  report.set_server(name);
  report.set_tool(tool_name);
  report.set_arguments_sha256(Sha256Hex(run.call().arguments_json()));
  // The event of every call, run or not, and the report's copy of it.
  auto audit = [&](const std::string& outcome, const std::string& line,
                   agent::ToolCallReport& into) {
    report.set_outcome(outcome);
    *into.mutable_mcp() = report;
    audit::AuditEvent event =
        MakeEvent("mcp_call", run.call().name(),
                  absl::StrCat(name, " ", tool_name), outcome, line);
    auto& fields = *event.mutable_fields()->mutable_fields();
    fields["call_id"].set_string_value(run.call().id());
    fields["server"].set_string_value(name);
    fields["mcp_tool"].set_string_value(tool_name);
    fields["arguments_sha256"].set_string_value(report.arguments_sha256());
    auto* files = fields["files_changed"].mutable_list_value();
    for (const std::string& path : report.files_changed()) {
      files->add_values()->set_string_value(path);
    }
    return c.audit->Record(event);
  };
  auto not_run = [&](const std::string& outcome,
                     const std::string& text) -> absl::StatusOr<ToolCallDone> {
    RETURN_IF_ERROR(audit(outcome, text, run.report()));
    return run.Refused(absl::StrCat("not run: ", outcome), text);
  };
  if (server->state != McpState::kReady) {
    return not_run("down", absl::StrCat("The MCP server '", name, "' is ",
                                        McpStateName(server->state), ": ",
                                        server->last_error,
                                        ". Its tools cannot be called."));
  }
  if (!tool->listed) {
    return not_run("not run", absl::StrCat("The MCP server '", name,
                                           "' no longer offers the tool ",
                                           tool_name, "."));
  }
  ASSIGN_OR_RETURN(std::optional<std::string> decision,
                   run.Decide(true, absl::StrCat("MCP ", run.summary()),
                              HintsLine(tool->tool)));
  if (!decision) {
    ToolCallDone done = run.TakeDone();
    RETURN_IF_ERROR(audit("not run", done.report.decision(), done.report));
    return done;
  }
  // A server that stopped between calls is restarted before anything is
  // sent, so the call itself is made once.
  server->client->Poll().IgnoreError();
  if (!server->client->broken().ok() &&
      !RestartAfterStop(*server, server->client->broken())) {
    return not_run("down", absl::StrCat("The MCP server '", name,
                                        "' is down: ", server->last_error,
                                        ". Its tools cannot be called."));
  }
  mcp::CallOptions options;
  options.timeout = server->entry.call_timeout;
  options.cancel = c.cancel;
  absl::StatusOr<mcp::CallResult> result =
      server->client->CallTool(tool_name, run.input(), options);
  std::string text;
  std::string outcome;
  std::string line;
  bool is_error = true;
  if (result.ok()) {
    text = result->text;
    if (text.empty() && result->structured_content) {
      text = provider::ToJson(*result->structured_content);
    }
    if (text.empty()) text = "(the tool returned no content)";
    is_error = result->is_error;
    outcome = is_error ? "tool error" : "ok";
    line = is_error ? absl::StrCat(name, ": the tool reported an error")
                    : absl::StrCat(name, ": ", text.size(), " characters");
  } else if (absl::IsCancelled(result.status())) {
    outcome = "cancelled";
    text =
        "The person cancelled the call (Ctrl-C); the server was told to "
        "stop it.";
    line = absl::StrCat(name, ": cancelled");
  } else if (absl::IsDeadlineExceeded(result.status())) {
    outcome = "timeout";
    text = absl::StrCat("The MCP server '", name, "' did not answer within ",
                        Seconds(server->entry.call_timeout),
                        "; the call was given up and the server told to "
                        "cancel it.");
    line = absl::StrCat(name, ": no answer within ",
                        Seconds(server->entry.call_timeout));
    server->last_error = std::string(result.status().message());
  } else if (!server->client->broken().ok()) {
    outcome = "stopped";
    absl::Status why = server->client->broken();
    if (RestartAfterStop(*server, why)) {
      text = absl::StrCat("The MCP server '", name,
                          "' stopped during the call (", why.message(),
                          "). Garuda restarted it (its one restart); the "
                          "call did not complete: call it again if it is "
                          "still needed.");
      line = absl::StrCat(name, ": stopped during the call; restarted");
    } else {
      text = absl::StrCat("The MCP server '", name,
                          "' stopped during the "
                          "call and is down: ",
                          server->last_error, ".");
      line = absl::StrCat(name, ": stopped; down");
    }
  } else {
    outcome = "refused";
    text = absl::StrCat("The MCP server '", name,
                        "' refused the call: ", result.status().message());
    line = absl::StrCat(name, ": refused the call");
  }
  // Staged mode: whatever the server changed goes to the change question,
  // after a failed call too (it may have written before failing).
  if (server->entry.changes) {
    absl::StatusOr<CommandService::Ran> changes = server->entry.changes();
    if (!changes.ok()) {
      if (IsFatal(changes.status())) return changes.status();
      absl::StrAppend(&text, "\nThe server's changes could not be collected: ",
                      changes.status().message());
    } else if (changes->change_set && !changes->change_set->changes.empty()) {
      for (const Change& change : changes->change_set->changes) {
        report.add_files_changed(change.entry.path());
      }
      ASSIGN_OR_RETURN(
          ChangeOutcome settled,
          SettleChangeSet(run, *changes,
                          absl::StrCat("MCP ", name, ": ", tool_name)));
      absl::StrAppend(&text, "\n", settled.line);
      line = absl::StrCat(name, ": ", settled.line);
      is_error = is_error || settled.is_error;
    }
  }
  RETURN_IF_ERROR(audit(outcome, line, run.report()));
  ToolOutput output;
  output.content = CapToolResult(text);
  output.is_error = is_error;
  return run.Finish(*decision, std::move(output), line);
}

std::vector<McpServerView> McpServers::Servers() const {
  absl::MutexLock lock(&mu_);
  std::vector<McpServerView> views;
  for (const auto& server : servers_) {
    McpServerView view;
    view.name = server->entry.name;
    view.origin = server->entry.origin;
    view.sandbox = server->entry.sandbox;
    view.state = server->state;
    view.last_error = server->last_error;
    view.restarts = server->restarts;
    if (server->client) {
      const mcp::ServerInfo& info = server->client->server_info();
      view.server = absl::StrCat(info.name, " ", info.version);
      view.protocol = info.protocol_version;
    }
    for (const auto& [name, tool] : server->tools) {
      if (!tool->listed) continue;
      view.tools.push_back({name, tool->tool.name, tool->rule,
                            tool->tool.read_only_hint, tool->offered.load()});
    }
    view.problems = server->problems;
    views.push_back(std::move(view));
  }
  return views;
}

absl::Status McpServers::Restart(const std::string& name) {
  absl::MutexLock lock(&mu_);
  Server* server = Find(name);
  if (server == nullptr) {
    return absl::NotFoundError(absl::StrCat("no MCP server named ", name));
  }
  if (server->state == McpState::kSkipped) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the MCP server ", name, " was skipped: ", server->last_error));
  }
  return Connect(*server);
}

absl::StatusOr<mcp::Client*> McpServers::ReadyClient(
    const std::string& name) const {
  Server* server = Find(name);
  if (server == nullptr) {
    return absl::NotFoundError(absl::StrCat("no MCP server named ", name));
  }
  if (server->state != McpState::kReady || server->client == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the MCP server ", name, " is ", McpStateName(server->state),
        server->last_error.empty() ? ""
                                   : absl::StrCat(": ", server->last_error)));
  }
  return server->client.get();
}

absl::StatusOr<std::string> McpServers::Resources(const std::string& name) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(mcp::Client * client, ReadyClient(name));
  ASSIGN_OR_RETURN(std::vector<mcp::Resource> resources,
                   client->ListResources());
  if (resources.empty()) return absl::StrCat(name, ": no resources");
  std::string text = absl::StrCat(name, ": ", resources.size(),
                                  " resources (/mcp read ", name, " URI)");
  for (const mcp::Resource& r : resources) {
    absl::StrAppend(
        &text, "\n  ", r.uri, "  ", r.title.empty() ? r.name : r.title,
        r.mime_type.empty() ? "" : absl::StrCat(" (", r.mime_type, ")"));
  }
  return text;
}

absl::StatusOr<std::string> McpServers::ReadResource(const std::string& name,
                                                     const std::string& uri) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(mcp::Client * client, ReadyClient(name));
  ASSIGN_OR_RETURN(mcp::ResourceContents contents, client->ReadResource(uri));
  if (contents.is_blob) {
    return absl::StrCat(contents.uri, ": ", contents.blob_bytes,
                        " bytes of binary data (", contents.mime_type, ")");
  }
  return CapToolResult(absl::StrCat(contents.uri, "\n", contents.text));
}

absl::StatusOr<std::string> McpServers::Prompts(const std::string& name) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(mcp::Client * client, ReadyClient(name));
  ASSIGN_OR_RETURN(std::vector<mcp::Prompt> prompts, client->ListPrompts());
  if (prompts.empty()) return absl::StrCat(name, ": no prompts");
  std::string text =
      absl::StrCat(name, ": ", prompts.size(), " prompts (/mcp prompt ", name,
                   " PROMPT [ARG=VALUE ...])");
  for (const mcp::Prompt& p : prompts) {
    std::vector<std::string> arguments;
    for (const mcp::PromptArgument& a : p.arguments) {
      arguments.push_back(a.required ? a.name : absl::StrCat("[", a.name, "]"));
    }
    absl::StrAppend(&text, "\n  ", p.name,
                    arguments.empty()
                        ? ""
                        : absl::StrCat(" ", absl::StrJoin(arguments, " ")),
                    p.description.empty()
                        ? ""
                        : absl::StrCat("  ", OneLineText(p.description, 120)));
  }
  return text;
}

absl::StatusOr<std::string> McpServers::GetPrompt(
    const std::string& name, const std::string& prompt,
    const std::map<std::string, std::string>& arguments) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(mcp::Client * client, ReadyClient(name));
  ASSIGN_OR_RETURN(mcp::PromptResult result,
                   client->GetPrompt(prompt, arguments));
  std::string text = absl::StrCat(name, " prompt ", prompt);
  if (!result.description.empty()) {
    absl::StrAppend(&text, ": ", result.description);
  }
  for (const mcp::PromptMessage& m : result.messages) {
    absl::StrAppend(&text, "\n[", m.role, "] ", m.text);
  }
  return CapToolResult(text);
}

std::string McpServers::List() const {
  if (servers_.empty()) {
    return "No MCP servers in this session (mcpServers in "
           "~/.garuda/settings.json; docs/mcp.md).";
  }
  std::string text;
  for (const auto& server : servers_) {
    if (!text.empty()) text += "\n";
    const McpServerEntry& e = server->entry;
    absl::StrAppend(&text, e.name, ": ", McpStateName(server->state));
    if (!e.origin.empty()) absl::StrAppend(&text, " | from ", e.origin);
    if (!e.sandbox.empty()) absl::StrAppend(&text, " | ", e.sandbox);
    if (server->client) {
      const mcp::ServerInfo& info = server->client->server_info();
      absl::StrAppend(&text, " | ", info.name, " ", info.version, " (MCP ",
                      info.protocol_version, ")");
    }
    if (server->restarts > 0) {
      absl::StrAppend(&text, " | restarted ", server->restarts, "x");
    }
    std::vector<std::string> tools;
    for (const auto& [name, tool] : server->tools) {
      if (!tool->listed) continue;
      tools.push_back(tool->tool.read_only_hint
                          ? absl::StrCat(tool->tool.name, " (read-only hint)")
                          : tool->tool.name);
    }
    if (server->state == McpState::kReady || !tools.empty()) {
      absl::StrAppend(&text, "\n  tools (", tools.size(), "): ",
                      tools.empty() ? "none" : absl::StrJoin(tools, ", "));
    }
    if (!server->last_error.empty()) {
      absl::StrAppend(&text, "\n  last error: ", server->last_error);
    }
    for (const std::string& problem : server->problems) {
      absl::StrAppend(&text, "\n  ", problem);
    }
  }
  return text;
}

std::string McpServers::Command(const std::string& arguments) {
  std::vector<std::string> words =
      absl::StrSplit(arguments, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  constexpr char kUsage[] =
      "/mcp: the servers; /mcp restart NAME; /mcp resources NAME; /mcp read "
      "NAME URI; /mcp prompts NAME; /mcp prompt NAME PROMPT [ARG=VALUE ...]";
  if (words.empty()) {
    absl::MutexLock lock(&mu_);
    return List();
  }
  const std::string& verb = words[0];
  auto said = [](const absl::StatusOr<std::string>& text) {
    return text.ok() ? *text : std::string(text.status().message());
  };
  if (verb == "restart" && words.size() == 2) {
    absl::Status restarted = Restart(words[1]);
    if (!restarted.ok()) {
      return absl::StrCat("The MCP server ", words[1],
                          " did not restart: ", restarted.message());
    }
    absl::MutexLock lock(&mu_);
    return absl::StrCat("Restarted. ", List());
  }
  if (verb == "resources" && words.size() == 2) {
    return said(Resources(words[1]));
  }
  if (verb == "read" && words.size() == 3) {
    return said(ReadResource(words[1], words[2]));
  }
  if (verb == "prompts" && words.size() == 2) return said(Prompts(words[1]));
  if (verb == "prompt" && words.size() >= 3) {
    std::map<std::string, std::string> args;
    for (size_t i = 3; i < words.size(); ++i) {
      size_t eq = words[i].find('=');
      if (eq == std::string::npos) {
        return absl::StrCat("/mcp prompt: \"", words[i],
                            "\" is not ARG=VALUE. ", kUsage);
      }
      args[words[i].substr(0, eq)] = words[i].substr(eq + 1);
    }
    return said(GetPrompt(words[1], words[2], args));
  }
  return kUsage;
}

}  // namespace agent
}  // namespace garuda
