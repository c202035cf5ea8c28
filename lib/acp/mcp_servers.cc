#include "lib/acp/mcp_servers.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "lib/acp/json_rpc.h"
#include "lib/base/status_macros.h"
#include "lib/policy/mcp_servers.h"

namespace garuda {
namespace acp {
namespace {

using google::protobuf::Value;

// ACP's [{name, value}] lists (env, headers) into a map; an entry that is
// not one is an error naming `what`.
absl::Status NameValues(const Value* list, absl::string_view what,
                        google::protobuf::Map<std::string, std::string>* out) {
  if (list == nullptr || list->kind_case() == Value::kNullValue) {
    return absl::OkStatus();
  }
  if (list->kind_case() != Value::kListValue) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is not a list"));
  }
  for (const Value& entry : list->list_value().values()) {
    std::optional<std::string> name = StringField(entry, "name");
    std::optional<std::string> value = StringField(entry, "value");
    if (!name || !value) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": an entry without a string name and value"));
    }
    (*out)[*name] = *value;
  }
  return absl::OkStatus();
}

absl::StatusOr<McpServer> EditorServer(const Value& entry) {
  McpServer server;
  server.set_source(McpServer::EDITOR);
  server.set_source_file("the editor (ACP)");
  std::optional<std::string> name = StringField(entry, "name");
  if (!name) return absl::InvalidArgumentError("an entry without a \"name\"");
  server.set_name(*name);
  if (absl::Status named = CheckMcpServerName(*name); !named.ok()) {
    return named;
  }
  std::string type = StringField(entry, "type").value_or("");
  McpServerSettings& d = *server.mutable_definition();
  if (type == "http") {
    // ACP has no allowedDomains: the editor's server may reach its own url's
    // host and nothing else (a policy's list still bounds it).
    d.set_type("http");
    d.set_url(StringField(entry, "url").value_or(""));
    ASSIGN_OR_RETURN(std::string host, UrlHost(d.url()));
    d.add_allowed_domains(host);
    RETURN_IF_ERROR(NameValues(Field(entry, "headers"), "\"headers\"",
                               d.mutable_headers()));
    RETURN_IF_ERROR(CheckMcpServerDefinition(*name, d));
    server.set_definition_sha256(McpDefinitionSha256(*name, d));
    return server;
  }
  if (!type.empty() && type != "stdio") {
    return absl::UnimplementedError(absl::StrCat(
        "a ", type,
        " server: only stdio and http (Streamable HTTP) are spoken"));
  }
  d.set_command(StringField(entry, "command").value_or(""));
  if (const Value* args = Field(entry, "args");
      args != nullptr && args->kind_case() == Value::kListValue) {
    for (const Value& arg : args->list_value().values()) {
      if (arg.kind_case() != Value::kStringValue) {
        return absl::InvalidArgumentError("\"args\" holds a non-string");
      }
      d.add_args(arg.string_value());
    }
  }
  if (absl::Status env =
          NameValues(Field(entry, "env"), "\"env\"", d.mutable_env());
      !env.ok()) {
    return env;
  }
  if (absl::Status checked = CheckMcpServerDefinition(*name, d);
      !checked.ok()) {
    return checked;
  }
  server.set_definition_sha256(McpDefinitionSha256(*name, d));
  return server;
}

}  // namespace

void AddEditorMcpServers(const Value* servers, McpServerPlan* plan) {
  if (servers == nullptr || servers->kind_case() != Value::kListValue) return;
  for (const Value& entry : servers->list_value().values()) {
    absl::StatusOr<McpServer> server = EditorServer(entry);
    if (!server.ok()) {
      McpSkippedServer skipped;
      skipped.server.set_name(StringField(entry, "name").value_or("(unnamed)"));
      skipped.server.set_source(McpServer::EDITOR);
      skipped.why =
          absl::StrCat("the editor's definition: ", server.status().message());
      plan->skipped.push_back(std::move(skipped));
      continue;
    }
    bool taken = false;
    for (const McpServer& known : plan->start) {
      taken = taken || known.name() == server->name();
    }
    for (const McpSkippedServer& known : plan->skipped) {
      taken = taken || known.server.name() == server->name();
    }
    if (taken) {
      McpSkippedServer skipped;
      skipped.server = *std::move(server);
      skipped.why =
          "the settings define a server of that name; theirs is the one used";
      plan->skipped.push_back(std::move(skipped));
      continue;
    }
    plan->start.push_back(*std::move(server));
  }
}

}  // namespace acp
}  // namespace garuda
