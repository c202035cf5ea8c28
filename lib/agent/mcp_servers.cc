#include "lib/agent/mcp_servers.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace garuda {
namespace agent {

McpServers::McpServers(McpOptions options)
    : options_(std::move(options)),
      tools_(options_.name_limit, &mu_, this),
      commands_(this) {}

McpServers::~McpServers() {
  absl::MutexLock lock(&mu_);
  for (auto& server : servers_) {
    if (server->client) server->client->Close();
  }
}

McpServerState* McpServers::Find(const std::string& name) const {
  for (const auto& server : servers_) {
    if (server->entry.name == name) return server.get();
  }
  return nullptr;
}

void McpServers::Start(std::vector<McpServerEntry> entries) {
  absl::MutexLock lock(&mu_);
  for (McpServerEntry& entry : entries) {
    auto server = std::make_unique<McpServerState>();
    server->entry = std::move(entry);
    McpServerState& s = *server;
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
  auto server = std::make_unique<McpServerState>();
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

absl::Status McpServers::Connect(McpServerState& server) {
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
                       McpSeconds(entry.start_timeout), " to start")));
    }
    absl::StatusOr<mcp::ToolList> listed = server.client->ListTools(left);
    if (!listed.ok()) return fail(listed.status());
    list = *std::move(listed);
  }
  server.state = McpState::kReady;
  server.last_error.clear();
  tools_.SetTools(server, std::move(list), servers_);
  return absl::OkStatus();
}

absl::Status McpServers::AddRows(ToolTable& table) {
  absl::MutexLock lock(&mu_);
  return tools_.AddRows(servers_, table);
}

std::string McpServers::Command(const std::string& arguments) {
  return commands_.Command(arguments);
}

bool McpServers::RestartAfterStop(McpServerState& server,
                                  const absl::Status& why) {
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
  McpServerState* server = Find(name);
  if (server == nullptr) {
    return absl::NotFoundError(absl::StrCat("no MCP server named ", name));
  }
  if (server->state == McpState::kSkipped) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the MCP server ", name, " was skipped: ", server->last_error));
  }
  return Connect(*server);
}

absl::StatusOr<std::string> McpServers::WithClient(
    const std::string& name,
    absl::FunctionRef<absl::StatusOr<std::string>(mcp::Client&)> use) {
  absl::MutexLock lock(&mu_);
  McpServerState* server = Find(name);
  if (server == nullptr) {
    return absl::NotFoundError(absl::StrCat("no MCP server named ", name));
  }
  if (server->state != McpState::kReady || server->client == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the MCP server ", name, " is ", McpStateName(server->state),
        server->last_error.empty() ? ""
                                   : absl::StrCat(": ", server->last_error)));
  }
  return use(*server->client);
}

}  // namespace agent
}  // namespace garuda
