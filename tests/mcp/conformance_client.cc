// The client entry point that the official conformance suite
// (@modelcontextprotocol/conformance) launches for each client scenario:
// `conformance_client URL`, the scenario's name in MCP_CONFORMANCE_SCENARIO.
// It connects with lib/mcp over Streamable HTTP, as garuda-agent does: only
// through a proxy, here lib/netproxy's server on a loopback port of its own
// that lets through the suite's test server and nothing else.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/acp/json_rpc.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/mcp/client.h"
#include "lib/netproxy/server.h"
#include "lib/provider/json.h"
#include "lib/rules/domain_rules.h"

namespace garuda {
namespace mcp {
namespace {

using Scenario = std::function<absl::Status(Client&, const ToolList&)>;

absl::Status CallFirstTool(Client& client, const ToolList& tools) {
  if (tools.tools.empty()) return absl::OkStatus();
  Value arguments = acp::Object();
  acp::Set(arguments, "a", acp::Num(2));
  acp::Set(arguments, "b", acp::Num(3));
  return client.CallTool(tools.tools[0].name, arguments, CallOptions())
      .status();
}

absl::Status ListOnly(Client&, const ToolList&) { return absl::OkStatus(); }

// Sends back the schema as it was listed: a client must not strip keywords.
absl::Status EchoSchema(Client& client, const ToolList& tools) {
  for (const Tool& tool : tools.tools) {
    if (tool.name != "json_schema_2020_12_tool") continue;
    Value arguments = acp::Object();
    acp::Set(arguments, "schema", tool.input_schema);
    return client.CallTool("json_schema_echo", arguments, CallOptions())
        .status();
  }
  return absl::NotFoundError("json_schema_2020_12_tool was not listed");
}

// The calls the scenario asks for in MCP_CONFORMANCE_CONTEXT's toolCalls,
// else every tool once with no arguments: the scenarios about headers and
// input_required look at what each call carries.
absl::Status CallEveryTool(Client& client, const ToolList& tools) {
  const char* context = std::getenv("MCP_CONFORMANCE_CONTEXT");
  if (context != nullptr) {
    absl::StatusOr<Value> parsed =
        provider::ParseJson(context, "MCP_CONFORMANCE_CONTEXT");
    const google::protobuf::ListValue* calls =
        parsed.ok() ? provider::ListMember(*parsed, "toolCalls") : nullptr;
    if (calls != nullptr) {
      for (const Value& call : calls->values()) {
        const Value* arguments = provider::ObjectMember(call, "arguments");
        absl::StatusOr<CallResult> result = client.CallTool(
            provider::StringMember(call, "name"),
            arguments != nullptr ? *arguments : acp::Object(), CallOptions());
        if (!result.ok()) {
          std::fprintf(stderr, "conformance_client: %s\n",
                       std::string(result.status().message()).c_str());
        }
      }
      return absl::OkStatus();
    }
  }
  for (const Tool& tool : tools.tools) {
    absl::StatusOr<CallResult> result =
        client.CallTool(tool.name, acp::Object(), CallOptions());
    if (!result.ok()) {
      std::fprintf(stderr, "conformance_client: %s: %s\n", tool.name.c_str(),
                   std::string(result.status().message()).c_str());
    }
  }
  return absl::OkStatus();
}

const std::map<std::string, Scenario>& Scenarios() {
  static const auto* scenarios = new std::map<std::string, Scenario>{
      {"initialize", CallFirstTool},
      {"tools_call", CallFirstTool},
      {"request-metadata", ListOnly},
      {"json-schema-ref-no-deref", ListOnly},
      {"json-schema-2020-12-preservation", EchoSchema},
      {"http-standard-headers", CallEveryTool},
      {"http-custom-headers", CallEveryTool},
      {"http-invalid-tool-headers", CallEveryTool},
      {"sep-2322-client-request-state", CallEveryTool},
  };
  return *scenarios;
}

// "http://localhost:PORT/..." → PORT.
absl::StatusOr<uint16_t> PortOf(const std::string& url) {
  size_t host = url.find("://");
  if (host == std::string::npos) return absl::InvalidArgumentError(url);
  size_t colon = url.find(':', host + 3);
  size_t slash = url.find('/', host + 3);
  uint32_t port = 80;
  if (colon != std::string::npos &&
      (slash == std::string::npos || colon < slash)) {
    if (!absl::SimpleAtoi(url.substr(colon + 1, slash - colon - 1), &port) ||
        port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat("no port in ", url));
    }
  }
  return static_cast<uint16_t>(port);
}

absl::Status Run(const std::string& url, const std::string& scenario_name) {
  auto scenario = Scenarios().find(scenario_name);
  if (scenario == Scenarios().end()) {
    return absl::UnimplementedError(
        absl::StrCat("no client behaviour for scenario ", scenario_name));
  }
  // 1. The proxy: the suite's host and port only.
  ASSIGN_OR_RETURN(uint16_t port, PortOf(url));
  netproxy::ProxyOptions proxy_options;
  ASSIGN_OR_RETURN(proxy_options.rules,
                   netproxy::DomainRules::Create({"localhost"}, {}));
  proxy_options.allowed_ports = {port};
  proxy_options.test_name_map = {{"localhost", "127.0.0.1"}};
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (!listener.valid() ||
      ::bind(listener.get(), reinterpret_cast<sockaddr*>(&address),
             sizeof(address)) != 0 ||
      ::listen(listener.get(), 16) != 0 ||
      ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address),
                    &length) != 0) {
    return absl::InternalError("cannot listen on a loopback port");
  }
  netproxy::ProxyServer proxy(std::move(proxy_options));
  std::thread serving([&] { (void)proxy.Serve(listener.get()); });
  struct Stopper {
    netproxy::ProxyServer* proxy;
    std::thread* thread;
    ~Stopper() {
      proxy->Stop();
      thread->join();
    }
  } stopper{&proxy, &serving};

  // 2. The client, as garuda-agent connects to a remote server.
  HttpOptions http;
  http.url = url;
  http.proxy_host_port = absl::StrCat("127.0.0.1:", ntohs(address.sin_port));
  ASSIGN_OR_RETURN(std::unique_ptr<Transport> transport,
                   HttpTransport(http, "conformance"));
  ConnectOptions options;
  char cwd[4096];
  options.root_dir = ::getcwd(cwd, sizeof(cwd)) != nullptr ? cwd : "/";
  options.client_name = "garuda-conformance";
  options.client_version = "1.0.0";
  options.start_timeout = absl::Seconds(20);
  ASSIGN_OR_RETURN(
      std::unique_ptr<Client> client,
      Client::Connect("conformance", std::move(transport), options));
  std::fprintf(stderr, "conformance_client: connected, protocol %s\n",
               client->server_info().protocol_version.c_str());
  ASSIGN_OR_RETURN(ToolList tools, client->ListTools());
  for (const std::string& problem : tools.problems) {
    std::fprintf(stderr, "conformance_client: %s\n", problem.c_str());
  }
  RETURN_IF_ERROR(scenario->second(*client, tools));
  client->Close();
  return absl::OkStatus();
}

}  // namespace
}  // namespace mcp
}  // namespace garuda

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: conformance_client SERVER_URL\n");
    return 2;
  }
  const char* scenario = std::getenv("MCP_CONFORMANCE_SCENARIO");
  absl::Status status =
      garuda::mcp::Run(argv[argc - 1], scenario != nullptr ? scenario : "");
  if (!status.ok()) {
    std::fprintf(stderr, "conformance_client: %s\n",
                 std::string(status.message()).c_str());
    return 1;
  }
  return 0;
}
