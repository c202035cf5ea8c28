#include "lib/agent/mcp_tools.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
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

McpTools::McpTools(size_t name_limit, absl::Mutex* mu, McpRestarter* restarter)
    : name_limit_(name_limit), mu_(mu), restarter_(restarter) {}

void McpTools::SetTools(McpServerState& server, mcp::ToolList list,
                        const McpServerList& servers) {
  server.problems = std::move(list.problems);
  for (auto& [name, tool] : server.tools) tool->listed = false;
  for (mcp::Tool& tool : list.tools) {
    std::string model_name =
        mcp::ModelToolName(server.entry.name, tool.name, name_limit_);
    absl::StatusOr<std::string> schema = RowSchema(tool);
    if (!schema.ok()) {
      server.problems.push_back(
          absl::StrCat("the tool ", tool.name,
                       " is not offered: ", schema.status().message()));
      continue;
    }
    bool taken = false;
    for (const auto& other : servers) {
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
    std::shared_ptr<McpToolState>& state = server.tools[model_name];
    if (state == nullptr) {
      state = std::make_shared<McpToolState>();
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

ToolRow McpTools::RowFor(McpServerState& server,
                         std::shared_ptr<McpToolState> tool) {
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
  McpServerState* s = &server;
  row.handler = [this, s, tool](ToolRun& run) { return Call(run, *s, tool); };
  row.offered = [tool] { return tool->offered.load(); };
  return row;
}

absl::Status McpTools::AddRows(const McpServerList& servers, ToolTable& table) {
  for (const auto& server : servers) {
    McpServerState& s = *server;
    if (s.state != McpState::kReady || !s.client) continue;
    // What the server sent since (a list_changed, a ping) is read now; a
    // server found stopped is restarted at its next call.
    s.client->Poll().IgnoreError();
    if (s.client->broken().ok() && s.client->ToolsChanged()) {
      absl::StatusOr<mcp::ToolList> listed =
          s.client->ListTools(s.entry.start_timeout);
      if (listed.ok()) {
        SetTools(s, *std::move(listed), servers);
      } else {
        s.last_error = absl::StrCat("listing its changed tools: ",
                                    listed.status().message());
      }
    }
    for (auto& [name, tool] : s.tools) {
      if (!tool->listed) continue;
      ToolRow row = RowFor(s, tool);
      if (const ToolRow* shown = table.Find(name); shown != nullptr) {
        // Listed again after a list_changed: the schema is read through
        // the tool's state, the description and kind are the row's.
        if (shown->spec.description == row.spec.description &&
            shown->spec.kind == row.spec.kind) {
          continue;
        }
        absl::Status replaced = table.Replace(std::move(row));
        if (!replaced.ok()) {
          s.problems.push_back(absl::StrCat(
              "the tool ", tool->tool.name,
              " keeps its earlier description: ", replaced.message()));
        }
        continue;
      }
      absl::Status registered = table.Register(std::move(row));
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

absl::StatusOr<ToolCallDone> McpTools::Call(
    ToolRun& run, McpServerState& server, std::shared_ptr<McpToolState> tool) {
  absl::MutexLock lock(mu_);
  const ToolContext& c = run.context();
  const std::string& name = server.entry.name;
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
  if (server.state != McpState::kReady) {
    return not_run("down", absl::StrCat("The MCP server '", name, "' is ",
                                        McpStateName(server.state), ": ",
                                        server.last_error,
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
  server.client->Poll().IgnoreError();
  if (!server.client->broken().ok() &&
      !restarter_->RestartAfterStop(server, server.client->broken())) {
    return not_run("down", absl::StrCat("The MCP server '", name,
                                        "' is down: ", server.last_error,
                                        ". Its tools cannot be called."));
  }
  mcp::CallOptions options;
  options.timeout = server.entry.call_timeout;
  options.cancel = c.cancel;
  absl::StatusOr<mcp::CallResult> result =
      server.client->CallTool(tool_name, run.input(), options);
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
                        McpSeconds(server.entry.call_timeout),
                        "; the call was given up and the server told to "
                        "cancel it.");
    line = absl::StrCat(name, ": no answer within ",
                        McpSeconds(server.entry.call_timeout));
    server.last_error = std::string(result.status().message());
  } else if (!server.client->broken().ok()) {
    outcome = "stopped";
    absl::Status why = server.client->broken();
    if (restarter_->RestartAfterStop(server, why)) {
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
                          server.last_error, ".");
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
  if (server.entry.changes) {
    absl::StatusOr<CommandService::Ran> changes = server.entry.changes();
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

}  // namespace agent
}  // namespace garuda
