#include "lib/policy/mcp_servers.h"

#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "lib/base/files.h"
#include "lib/base/json_message.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"
#include "lib/changeset/beneath.h"
#include "lib/jobs/scope.h"
#include "lib/rules/domain_rules.h"

namespace garuda {
namespace {

constexpr size_t kMaxNameLength = 64;

absl::Status FieldError(absl::string_view name, absl::string_view field,
                        absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "mcpServers.", name, field.empty() ? "" : ".", field, ": ", why));
}

bool ValidEnvName(absl::string_view name) {
  if (name.empty() || absl::ascii_isdigit(name[0])) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

// http:// is taken only for the machine itself (a server the person runs
// locally); anything else would send the headers' tokens in clear.
bool LoopbackHost(absl::string_view url) {
  for (absl::string_view host :
       {"http://127.0.0.1", "http://localhost", "http://[::1]"}) {
    if (absl::StartsWith(url, host)) {
      absl::string_view rest = url.substr(host.size());
      if (rest.empty() || rest[0] == ':' || rest[0] == '/') return true;
    }
  }
  return false;
}

absl::Status CheckStdio(absl::string_view name, const McpServerSettings& d) {
  if (d.command().empty()) {
    return FieldError(name, "command",
                      "a stdio server needs the program to start");
  }
  if (!d.url().empty()) {
    return FieldError(name, "url",
                      "a server is either local (command) or remote (url), "
                      "not both");
  }
  if (!d.headers().empty()) {
    return FieldError(name, "headers",
                      "only a remote server (url) has headers");
  }
  for (const auto& [key, value] : d.env()) {
    if (!ValidEnvName(key)) {
      return FieldError(name, absl::StrCat("env.", key),
                        "not a variable name ([A-Za-z_][A-Za-z0-9_]*)");
    }
    if (value.find('\0') != std::string::npos) {
      return FieldError(name, absl::StrCat("env.", key), "has a NUL byte");
    }
  }
  for (int i = 0; i < d.args_size(); ++i) {
    if (d.args(i).find('\0') != std::string::npos) {
      return FieldError(name, absl::StrCat("args[", i, "]"), "has a NUL byte");
    }
  }
  if (d.command().find('\0') != std::string::npos) {
    return FieldError(name, "command", "has a NUL byte");
  }
  if (!d.cwd().empty() && d.cwd() != "." && d.cwd() != "/") {
    // An absolute one by the same rules, so that the check that it lies in
    // the project can compare strings.
    absl::Status relative =
        CheckRelativePath(d.cwd()[0] == '/' ? d.cwd().substr(1) : d.cwd());
    if (!relative.ok()) return FieldError(name, "cwd", relative.message());
  }
  for (int i = 0; i < d.write_scope_size(); ++i) {
    absl::Status entry = jobs::CheckScopeEntry(d.write_scope(i));
    if (!entry.ok()) {
      return FieldError(name, absl::StrCat("writeScope[", i, "]"),
                        entry.message());
    }
  }
  return absl::OkStatus();
}

absl::Status CheckHttp(absl::string_view name, const McpServerSettings& d) {
  if (d.url().empty()) {
    return FieldError(name, "url", "a remote server needs its URL");
  }
  if (!absl::StartsWith(d.url(), "https://") && !LoopbackHost(d.url())) {
    return FieldError(name, "url",
                      absl::StrCat("\"", d.url(),
                                   "\" is not https:// (http:// only for "
                                   "127.0.0.1, localhost or [::1])"));
  }
  const char* local_only[] = {"command", "args", "env", "cwd", "writeScope"};
  const bool present[] = {!d.command().empty(), d.args_size() > 0,
                          !d.env().empty(), !d.cwd().empty(),
                          d.write_scope_size() > 0};
  for (size_t i = 0; i < sizeof present / sizeof present[0]; ++i) {
    if (present[i]) {
      return FieldError(name, local_only[i],
                        "only a local server (command) has it");
    }
  }
  for (const auto& [key, value] : d.headers()) {
    if (key.empty() || key.find_first_of(":\r\n ") != std::string::npos) {
      return FieldError(name, absl::StrCat("headers.", key),
                        "not a header name");
    }
    if (value.find_first_of("\r\n") != std::string::npos ||
        value.find('\0') != std::string::npos) {
      return FieldError(name, absl::StrCat("headers.", key),
                        "a header value is one line");
    }
  }
  return absl::OkStatus();
}

struct Source {
  const Settings* settings;
  const std::string* path;
  McpServer::Source kind;
};

}  // namespace

std::string ProjectMcpJsonFile(absl::string_view project) {
  return JoinPath(std::string(project), ".mcp.json");
}

absl::Status CheckMcpServerName(absl::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength) {
    return absl::InvalidArgumentError(
        absl::StrCat("a server's name has 1 to ", kMaxNameLength,
                     " characters, not ", name.size()));
  }
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != '-') {
      return absl::InvalidArgumentError(
          absl::StrCat("a server's name is made of letters, digits, '_' and "
                       "'-' (it goes into tool names), not \"",
                       name, "\""));
    }
  }
  return absl::OkStatus();
}

std::string McpTransport(const McpServerSettings& definition) {
  if (definition.type() == "stdio") return "stdio";
  if (definition.type() == "http" || definition.type() == "streamable-http") {
    return "http";
  }
  if (!definition.type().empty()) return definition.type();
  return !definition.command().empty() || definition.url().empty() ? "stdio"
                                                                   : "http";
}

absl::Status CheckMcpServerDefinition(absl::string_view name,
                                      const McpServerSettings& definition) {
  absl::Status named = CheckMcpServerName(name);
  if (!named.ok()) return FieldError(name, "", named.message());
  const std::string& type = definition.type();
  if (type == "sse") {
    return FieldError(name, "type",
                      "\"sse\" is the transport that Streamable HTTP "
                      "replaced (MCP 2025-03-26); use the server's "
                      "Streamable HTTP endpoint with \"type\": \"http\"");
  }
  if (!type.empty() && type != "stdio" && type != "http" &&
      type != "streamable-http") {
    return FieldError(
        name, "type",
        absl::StrCat("\"", type,
                     "\" is not \"stdio\", \"http\" or \"streamable-http\""));
  }
  for (int i = 0; i < definition.allowed_domains_size(); ++i) {
    absl::StatusOr<std::string> entry =
        netproxy::DomainRules::NormalizeEntry(definition.allowed_domains(i));
    if (!entry.ok()) {
      return FieldError(name, absl::StrCat("allowedDomains[", i, "]"),
                        absl::StrCat("\"", definition.allowed_domains(i),
                                     "\": ", entry.status().message()));
    }
  }
  if (McpTransport(definition) == "stdio") return CheckStdio(name, definition);
  return CheckHttp(name, definition);
}

std::string McpDefinitionSha256(absl::string_view name,
                                const McpServerSettings& definition) {
  std::string encoded;
  {
    google::protobuf::io::StringOutputStream stream(&encoded);
    google::protobuf::io::CodedOutputStream coded(&stream);
    // Map entries in key order: the same definition, the same digest.
    coded.SetSerializationDeterministic(true);
    definition.SerializeToCodedStream(&coded);
  }
  return Sha256Hex(absl::StrCat(name, "\n", encoded));
}

absl::StatusOr<McpServerSources> CollectMcpServers(
    const SettingsSources& sources, const std::string& project) {
  McpServerSources out;
  std::map<std::string, std::string> defined_in;
  auto add = [&](const std::string& name, const McpServerSettings& definition,
                 const std::string& file,
                 McpServer::Source kind) -> absl::Status {
    absl::Status checked = CheckMcpServerDefinition(name, definition);
    if (!checked.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ": ", checked.message()));
    }
    auto [it, inserted] = defined_in.emplace(name, file);
    if (!inserted) {
      out.notices.push_back(absl::StrCat(
          file, ": MCP server \"", name, "\" is ignored: ", it->second,
          " defines a server of that name first"));
      return absl::OkStatus();
    }
    McpServer& server = out.servers.emplace_back();
    server.set_name(name);
    server.set_source(kind);
    server.set_source_file(file);
    *server.mutable_definition() = definition;
    server.set_definition_sha256(McpDefinitionSha256(name, definition));
    return absl::OkStatus();
  };
  // A file's map in name order, so that the start order does not depend on
  // a hash table's.
  auto add_all =
      [&](const google::protobuf::Map<std::string, McpServerSettings>& servers,
          const std::string& file, McpServer::Source kind) -> absl::Status {
    std::map<std::string, const McpServerSettings*> sorted;
    for (const auto& [name, definition] : servers) {
      sorted.emplace(name, &definition);
    }
    for (const auto& [name, definition] : sorted) {
      RETURN_IF_ERROR(add(name, *definition, file, kind));
    }
    return absl::OkStatus();
  };

  const Source person[] = {
      {&sources.managed_policy, &sources.managed_policy_path,
       McpServer::POLICY},
      {&sources.user_policy, &sources.user_policy_path, McpServer::POLICY},
      {&sources.user_settings, &sources.user_settings_path, McpServer::USER},
  };
  for (const Source& source : person) {
    RETURN_IF_ERROR(
        add_all(source.settings->mcp_servers(), *source.path, source.kind));
    if (out.project_servers_forbidden_by.empty() &&
        source.settings->mcp().has_project_servers() &&
        !source.settings->mcp().project_servers()) {
      out.project_servers_forbidden_by = *source.path;
    }
  }
  const Settings& project_settings = sources.project_settings;
  if (project_settings.mcp().has_project_servers()) {
    out.notices.push_back(
        absl::StrCat(sources.project_settings_path,
                     ": mcp.projectServers is ignored in a project's "
                     "settings (only the person's files decide it)"));
  }
  RETURN_IF_ERROR(add_all(project_settings.mcp_servers(),
                          sources.project_settings_path, McpServer::PROJECT));
  if (project.empty()) return out;

  const std::string mcp_json = ProjectMcpJsonFile(project);
  McpJsonFile file;
  absl::Status read = ReadJsonMessageFile(mcp_json, &file);
  if (absl::IsNotFound(read)) return out;
  if (read.ok()) {
    // Checked whole first: a file with one bad server starts none of its
    // servers rather than some.
    for (const auto& [name, definition] : file.mcp_servers()) {
      absl::Status checked = CheckMcpServerDefinition(name, definition);
      if (!checked.ok()) {
        read = absl::InvalidArgumentError(
            absl::StrCat(mcp_json, ": ", checked.message()));
        break;
      }
    }
  }
  if (!read.ok()) {
    out.project_file_problem = std::string(read.message());
    out.notices.push_back(absl::StrCat("the project's MCP servers in ",
                                       mcp_json,
                                       " are not started: ", read.message()));
    return out;
  }
  RETURN_IF_ERROR(add_all(file.mcp_servers(), mcp_json, McpServer::PROJECT));
  return out;
}

absl::StatusOr<std::string> UrlHost(const std::string& url) {
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "https://") &&
      !absl::ConsumePrefix(&rest, "http://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", url, "\" is neither https:// nor http://"));
  }
  rest = rest.substr(0, rest.find_first_of("/?#"));
  const size_t at = rest.rfind('@');
  if (at != absl::string_view::npos) rest.remove_prefix(at + 1);
  absl::string_view host = rest;
  if (absl::StartsWith(rest, "[")) {
    const size_t close = rest.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", url, "\" has an unclosed [ in its host"));
    }
    host = rest.substr(1, close - 1);
  } else {
    host = rest.substr(0, rest.find(':'));
  }
  if (host.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", url, "\" names no host"));
  }
  return absl::AsciiStrToLower(host);
}

}  // namespace garuda
