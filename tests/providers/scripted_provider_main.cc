// scripted-provider: a scripted OpenAI- or Anthropic-compatible server on a
// loopback port, for tests that run the agent as a separate program.
//
//   scripted-provider --kind=openai --script=script.json
//       [--port-file=port] [--requests-log=requests.jsonl]
//
// The script is a ProviderScript (tests/providers/provider_script.proto) in
// JSON. Once the server listens, its port is printed on stdout (one line) and
// written to --port-file when given; each request it receives is appended to
// --requests-log as one RecordedRequest JSON line. It serves until it gets
// SIGTERM or SIGINT.
#include <signal.h>

#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/base/flags.h"
#include "lib/base/json_message.h"
#include "tests/providers/scripted_server.h"

ABSL_FLAG(std::string, kind, "openai", "\"openai\" or \"anthropic\"");
ABSL_FLAG(std::string, script, "", "the ProviderScript JSON file");
ABSL_FLAG(std::string, port_file, "",
          "where to write the port (optional; it is also printed)");
ABSL_FLAG(std::string, requests_log, "",
          "where to append each request as a JSON line (optional)");

namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "scripted-provider: %s\n",
               std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  garuda::ParseProgramFlags(
      argc, argv,
      "scripted-provider: serves a scripted OpenAI- or Anthropic-compatible "
      "model on 127.0.0.1 for tests.\n"
      "  scripted-provider --kind=openai|anthropic --script=FILE "
      "[--port-file=FILE] [--requests-log=FILE]\n"
      "  --kind: \"openai\" or \"anthropic\"; --script: a ProviderScript "
      "JSON file (tests/providers/provider_script.proto); --port-file: where "
      "to write "
      "the port, which is also printed on stdout; --requests-log: each "
      "request received, as a JSON line.");
  // SIGTERM and SIGINT are taken by sigwait below, on this thread only.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto kind =
      garuda::provider::testing::KindFromName(absl::GetFlag(FLAGS_kind));
  if (!kind.ok()) return Fail(kind.status());
  garuda::provider::ProviderScript script;
  absl::Status read =
      garuda::ReadJsonMessageFile(absl::GetFlag(FLAGS_script), &script,
                                  garuda::JsonFileOptions(true));
  if (!read.ok()) return Fail(read);
  const std::string log = absl::GetFlag(FLAGS_requests_log);
  auto server = garuda::provider::testing::ScriptedServer::Start(
      *kind, std::move(script),
      [log](const garuda::provider::RecordedRequest& request) {
        if (log.empty()) return;
        FILE* file = std::fopen(log.c_str(), "ae");
        if (file == nullptr) return;
        const std::string line = garuda::MessageToJsonLine(request) + "\n";
        std::fwrite(line.data(), 1, line.size(), file);
        std::fclose(file);
      });
  if (!server.ok()) return Fail(server.status());
  const std::string port = absl::StrCat((*server)->port(), "\n");
  if (!absl::GetFlag(FLAGS_port_file).empty()) {
    absl::Status written =
        garuda::WriteFileAtomically(absl::GetFlag(FLAGS_port_file), port, 0644);
    if (!written.ok()) return Fail(written);
  }
  std::fputs(port.c_str(), stdout);
  std::fflush(stdout);
  int signal = 0;
  sigwait(&signals, &signal);
  return 0;
}
