// Scripted model-provider servers for tests: real HTTP/1.1 on a loopback
// port, one speaking OpenAI Chat Completions (POST /v1/chat/completions) and
// one Anthropic Messages (POST /v1/messages). Each request is answered with
// the script's next reply, streamed as the provider streams it (chunked
// transfer, one server-sent event per chunk), or with a fault: an error event
// after HTTP 200, a dropped connection, a stream that holds until the client
// hangs up. Every request is recorded for the test to check.
#ifndef GARUDA_TESTS_PROVIDERS_SCRIPTED_SERVER_H_
#define GARUDA_TESTS_PROVIDERS_SCRIPTED_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "lib/base/unique_fd.h"
#include "tests/providers/provider_script.pb.h"

namespace garuda {
namespace provider {
namespace testing {

enum class ServerKind { kOpenAi, kAnthropic };

// "openai" or "anthropic".
const char* KindName(ServerKind kind);
absl::StatusOr<ServerKind> KindFromName(const std::string& name);

// One reply in the wire format of `kind`: the HTTP status line and headers
// (without the body framing) and the body as pieces; `fault_after` is the
// number of pieces sent before the reply's fault (all of them when none).
struct RenderedReply {
  int status = 200;
  std::vector<std::string> headers;  // "Name: value"
  std::vector<std::string> pieces;
  size_t fault_after = 0;
};
RenderedReply Render(ServerKind kind, const ScriptedReply& reply);

class ScriptedServer {
 public:
  // Listens on 127.0.0.1 on a port the kernel picks and serves on a thread.
  // `on_request` (optional) sees each recorded request as it arrives.
  static absl::StatusOr<std::unique_ptr<ScriptedServer>> Start(
      ServerKind kind, ProviderScript script,
      std::function<void(const RecordedRequest&)> on_request = nullptr);
  ~ScriptedServer();

  int port() const { return port_; }
  // OpenAI: http://127.0.0.1:<port>/v1 (the base URL names /v1, as the
  // OpenAI clients do); Anthropic: http://127.0.0.1:<port>.
  std::string base_url() const;

  std::vector<RecordedRequest> requests() const;
  size_t request_count() const;
  // Waits until the client hung up on a HOLD reply (true), or `timeout`.
  bool WaitForHangUp(absl::Duration timeout);

 private:
  ScriptedServer(ServerKind kind, ProviderScript script, UniqueFd listener,
                 UniqueFd stop_read, UniqueFd stop_write, int port);
  void Serve();
  void HandleConnection(UniqueFd connection);
  // Reads and drops what the client sends until it closes (true) or the
  // server stops (false).
  bool WaitForClientClose(int fd);

  ServerKind kind_;
  ProviderScript script_;
  UniqueFd listener_;
  UniqueFd stop_read_, stop_write_;
  int port_;
  std::function<void(const RecordedRequest&)> on_request_;
  mutable absl::Mutex mutex_;
  std::vector<RecordedRequest> requests_ ABSL_GUARDED_BY(mutex_);
  int hang_ups_ ABSL_GUARDED_BY(mutex_) = 0;
  std::vector<bool> used_ ABSL_GUARDED_BY(mutex_);
  std::thread thread_;
};

}  // namespace testing
}  // namespace provider
}  // namespace garuda

#endif  // GARUDA_TESTS_PROVIDERS_SCRIPTED_SERVER_H_
