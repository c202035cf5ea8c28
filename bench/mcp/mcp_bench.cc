// bench/mcp: what an MCP server costs through lib/mcp: its start (process
// start, server/discover probe, initialize, first tools/list) and one
// tools/call round trip, for @modelcontextprotocol/server-everything, each
// way of starting it in a column, all in one run (bench/mcp/README.md).
//
// Two columns: started plainly (fork/exec, as other agents start servers),
// and sandboxed (garuda-stager's StartMcpServer in a session of its own, as
// every garuda-agent session starts servers). Both run the same copy of the
// server, in a project folder, since the sandbox shows the project and not
// the bench's runfiles.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "lib/acp/json_rpc.h"
#include "lib/base/status_macros.h"
#include "lib/ipc/helper_process.h"
#include "lib/mcp/client.h"
#include "lib/staging/client.h"
#include "proto/settings.pb.h"
#include "tests/mcp/plain_server.h"

namespace garuda {
namespace mcp {
namespace {

// One started server: the client's two descriptors and what keeps the
// process (ends it when destroyed).
struct Launched {
  UniqueFd to_server;
  UniqueFd from_server;
  std::shared_ptr<void> keep;
};

struct Launcher {
  const char* name;
  std::function<absl::StatusOr<Launched>(const std::string& script)> start;
};

absl::StatusOr<Launched> StartPlainly(const std::string& script) {
  ASSIGN_OR_RETURN(
      PlainServer server,
      PlainServer::Start(NodeArgv(script, {"stdio"}), "/dev/null"));
  Launched launched;
  launched.to_server = std::move(server.to_server);
  launched.from_server = std::move(server.from_server);
  launched.keep = std::make_shared<PlainServer>(std::move(server));
  return launched;
}

// One garuda-stager session for the whole run, as an agent's session has
// one; each start is a StartMcpServer on it (the stager's session itself
// is started once per session, not per server, so it is not in a start).
class StagerSession {
 public:
  static absl::StatusOr<std::unique_ptr<StagerSession>> Start(
      const std::string& project) {
    ipc::HelperOptions options;
    options.argv = {"cmd/garuda-stager/garuda-stager",
                    "serve",
                    "--channel-fd=3",
                    "--project",
                    project,
                    "--mode",
                    "direct",
                    "--session-id",
                    "mcp-bench"};
    auto session = std::unique_ptr<StagerSession>(new StagerSession);
    ASSIGN_OR_RETURN(session->helper_, ipc::HelperProcess::Spawn(options));
    session->service_ = StagerChannelClient(session->helper_.get());
    return session;
  }
  ~StagerSession() {
    if (service_) service_->End().IgnoreError();
  }

  absl::StatusOr<Launched> StartServer(const std::string& script) {
    McpServer server;
    // A name per start, so that no start pays for stopping the last one.
    server.set_name(absl::StrCat("everything", ++started_));
    server.set_source(McpServer::USER);
    McpServerSettings& d = *server.mutable_definition();
    d.set_command("node");
    d.add_args(script);
    d.add_args("stdio");
    ASSIGN_OR_RETURN(CommandService::McpServerPipes pipes,
                     service_->StartMcpServer(server));
    Launched launched;
    launched.to_server = std::move(pipes.to_server);
    launched.from_server = std::move(pipes.from_server);
    CommandService* service = service_.get();
    std::string name = server.name();
    launched.keep = std::shared_ptr<void>(nullptr, [service, name](void*) {
      service->StopMcpServer(name).IgnoreError();
    });
    return launched;
  }

 private:
  StagerSession() = default;
  std::unique_ptr<ipc::HelperProcess> helper_;
  std::unique_ptr<CommandService> service_;
  int started_ = 0;
};

StagerSession* g_stager = nullptr;

absl::StatusOr<Launched> StartSandboxed(const std::string& script) {
  if (g_stager == nullptr) {
    return absl::FailedPreconditionError("garuda-stager did not start");
  }
  return g_stager->StartServer(script);
}

// Each way of starting a server, one column each.
const Launcher kLaunchers[] = {
    {"plain", StartPlainly},
    {"sandboxed", StartSandboxed},
};

struct Figures {
  std::vector<double> start_ms;
  std::vector<double> call_us;
  std::string error;
};

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1,
                         static_cast<size_t>(p * values.size()))];
}

absl::StatusOr<std::unique_ptr<Client>> Connect(Launched& launched) {
  ConnectOptions options;
  options.root_dir = "/tmp";
  options.client_version = "bench";
  return Client::Connect(
      "everything",
      StdioTransport(std::move(launched.to_server),
                     std::move(launched.from_server), "everything"),
      options);
}

absl::Status Measure(const Launcher& launcher, const std::string& script,
                     int starts, int calls, Figures& figures) {
  for (int i = 0; i < starts; ++i) {
    const absl::Time begin = absl::Now();
    ASSIGN_OR_RETURN(Launched launched, launcher.start(script));
    ASSIGN_OR_RETURN(std::unique_ptr<Client> client, Connect(launched));
    ASSIGN_OR_RETURN(ToolList tools, client->ListTools());
    figures.start_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - begin));
    if (i + 1 < starts) continue;
    // The last server also answers the calls.
    Value arguments = acp::Object();
    acp::Set(arguments, "message", acp::Str("ping from the bench"));
    for (int warm = 0; warm < 20; ++warm) {
      RETURN_IF_ERROR(client->CallTool("echo", arguments, {}).status());
    }
    for (int call = 0; call < calls; ++call) {
      const absl::Time sent = absl::Now();
      absl::StatusOr<CallResult> result =
          client->CallTool("echo", arguments, {});
      figures.call_us.push_back(absl::ToDoubleMicroseconds(absl::Now() - sent));
      RETURN_IF_ERROR(result.status());
    }
  }
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  int starts = 10;
  int calls = 1000;
  if (argc > 1 && !absl::SimpleAtoi(argv[1], &starts)) starts = 10;
  if (argc > 2 && !absl::SimpleAtoi(argv[2], &calls)) calls = 1000;
  char cwd[4096];
  // `bazel run` starts the bench in its runfiles, where the pinned
  // packages are.
  const std::string script = PinnedServerScript(
      "server-everything", ::getcwd(cwd, sizeof(cwd)) != nullptr ? cwd : ".");
  if (::access(script.c_str(), R_OK) != 0) {
    std::fprintf(stderr, "mcp_bench: %s is missing; run: bash tools/setup.sh\n",
                 script.c_str());
    return 1;
  }
  // The project both columns run the server from: the packages copied in
  // (the sandbox shows the project, not these runfiles), and the stager's
  // logs in a HOME of the bench's own.
  char base_template[] = "/tmp/mcp-bench-XXXXXX";
  const char* base = ::mkdtemp(base_template);
  if (base == nullptr) {
    std::perror("mcp_bench: mkdtemp");
    return 1;
  }
  const std::string project = absl::StrCat(base, "/project");
  const std::string copy =
      absl::StrCat("mkdir -p ", project, " ", base, "/home && cp -rL ", cwd,
                   "/tests/mcp/node_modules ", project, "/node_modules");
  if (std::system(copy.c_str()) != 0) {
    std::fprintf(stderr, "mcp_bench: %s failed\n", copy.c_str());
    return 1;
  }
  ::setenv("HOME", absl::StrCat(base, "/home").c_str(), 1);
  const std::string project_script =
      absl::StrCat(project,
                   "/node_modules/@modelcontextprotocol/server-everything/dist/"
                   "index.js");
  absl::StatusOr<std::unique_ptr<StagerSession>> stager =
      StagerSession::Start(project);
  if (stager.ok()) {
    g_stager = stager->get();
  } else {
    std::fprintf(stderr, "mcp_bench: garuda-stager: %s\n",
                 std::string(stager.status().message()).c_str());
  }
  std::vector<Figures> columns(std::size(kLaunchers));
  // Alternating rounds, so that a busy moment of the machine falls on every
  // column alike.
  const int rounds = 3;
  for (int round = 0; round < rounds; ++round) {
    for (size_t i = 0; i < std::size(kLaunchers); ++i) {
      if (!columns[i].error.empty()) continue;
      absl::Status measured =
          Measure(kLaunchers[i], project_script, std::max(1, starts / rounds),
                  std::max(1, calls / rounds), columns[i]);
      if (!measured.ok()) columns[i].error = std::string(measured.message());
    }
  }
  std::printf(
      "mcp bench: server-everything, %d starts and %d tools/call echo round "
      "trips per column, %d alternating rounds\n",
      starts, calls, rounds);
  std::printf("%-34s", "");
  for (const Launcher& launcher : kLaunchers)
    std::printf("%14s", launcher.name);
  std::printf("\n");
  auto row = [&](const char* label, auto figure) {
    std::printf("%-34s", label);
    for (const Figures& column : columns) {
      if (!column.error.empty()) {
        std::printf("%14s", "failed");
      } else {
        std::printf("%14.1f", figure(column));
      }
    }
    std::printf("\n");
  };
  row("start to first tools/list, ms",
      [](const Figures& f) { return Median(f.start_ms); });
  row("  best, ms", [](const Figures& f) {
    return *std::min_element(f.start_ms.begin(), f.start_ms.end());
  });
  row("tools/call round trip, median us",
      [](const Figures& f) { return Median(f.call_us); });
  row("  p90, us", [](const Figures& f) { return Percentile(f.call_us, 0.9); });
  for (size_t i = 0; i < columns.size(); ++i) {
    if (!columns[i].error.empty()) {
      std::printf("%s: %s\n", kLaunchers[i].name, columns[i].error.c_str());
    }
  }
  if (columns.size() == 2 && columns[0].error.empty() &&
      columns[1].error.empty()) {
    std::printf(
        "sandboxed beside plain: call %.2f x, start %+.1f ms (goals, issue "
        "27: at most 1.2 x and +50 ms)\n",
        Median(columns[1].call_us) / Median(columns[0].call_us),
        Median(columns[1].start_ms) - Median(columns[0].start_ms));
  }
  std::printf(
      "goals (issue 27, sandboxed beside plain): a call at most 1.2 x, a "
      "start at most +50 ms\n");
  g_stager = nullptr;
  stager = absl::StatusOr<std::unique_ptr<StagerSession>>(nullptr);
  std::system(absl::StrCat("rm -rf ", base).c_str());
  return 0;
}

}  // namespace
}  // namespace mcp
}  // namespace garuda

int main(int argc, char** argv) { return garuda::mcp::Main(argc, argv); }
