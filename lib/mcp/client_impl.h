// The state behind Client, its channel, and the helpers its three source files
// share: client.cc (connecting and the start of a session), client_rpc.cc
// (requests, answers and what the server sends meanwhile) and client_methods.cc
// (the MCP methods). Private to lib/mcp.
#ifndef GARUDA_LIB_MCP_CLIENT_IMPL_H_
#define GARUDA_LIB_MCP_CLIENT_IMPL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/mcp/client.h"
#include "lib/mcp/wire.h"

namespace garuda {
namespace mcp {

// The revision without a handshake: every request carries these in _meta.
constexpr char kModernVersion[] = "2026-07-28";
constexpr char kMetaVersion[] = "io.modelcontextprotocol/protocolVersion";
constexpr char kMetaClientInfo[] = "io.modelcontextprotocol/clientInfo";
constexpr char kMetaCapabilities[] =
    "io.modelcontextprotocol/clientCapabilities";
constexpr char kMetaServerInfo[] = "io.modelcontextprotocol/serverInfo";

constexpr int kUnsupportedProtocolVersion = -32022;

// A name, title or URI from a list, cut to a length a person can read.
std::string Field(const Value& object, absl::string_view key);

// A JSON-RPC 2.0 request (with an id) or notification (without).
Value RpcRequest(std::optional<int64_t> id, absl::string_view method,
                 Value params);

// What a server said to server/discover: the versions it lists (in a
// DiscoverResult or an UnsupportedProtocolVersionError), and whether it was
// a DiscoverResult. Anything else lists nothing: a server of an earlier
// revision.
struct ProbeAnswer {
  bool listed = false;
  bool discovered = false;
  std::vector<std::string> supported;
};

ProbeAnswer ReadProbeAnswer(const RpcMessage& answer);
bool Lists(const ProbeAnswer& answer, absl::string_view version);

// The JSON-RPC channel to one server and the state of the connection:
// requests and their answers, pages of lists, and what the server sends
// meanwhile (requests it makes of us, notifications). Client::Impl builds the
// MCP session on it.
class ClientChannel {
 public:
  ClientChannel(std::string server_name, std::unique_ptr<Transport> transport,
                ConnectOptions options)
      : name_(std::move(server_name)),
        transport_(std::move(transport)),
        options_(std::move(options)) {}

  std::mutex mu_;
  std::string name_;
  std::unique_ptr<Transport> transport_;
  ConnectOptions options_;
  ServerInfo info_;
  bool modern_ = false;
  int64_t next_id_ = 1;
  std::atomic<bool> tools_changed_{false};
  absl::Status broken_;
  std::optional<int64_t> listen_id_;
  bool closed_ = false;
  // The server/discover probe that timed out, and its answer if it comes
  // (a DiscoverResult) while initialize waits.
  std::optional<int64_t> probe_id_;
  std::optional<Value> late_discover_;

 protected:
  // One request and its answer (with the rounds of input_required a
  // 2026-07-28 server may ask for), within `timeout`. The result is an
  // object.
  absl::StatusOr<Value> Call(absl::string_view method, Value params,
                             absl::Duration timeout,
                             const CallOptions* call = nullptr);
  // Reads until the answer to `id` arrives, answering and noting what else
  // the server sends meanwhile.
  absl::StatusOr<RpcMessage> Await(absl::string_view method, int64_t id,
                                   absl::Time deadline, absl::Duration timeout,
                                   const CallOptions* call,
                                   bool cancel_on_timeout = true);
  void Handle(const RpcMessage& message, int64_t current_id,
              const CallOptions* call);
  // A received value as JSON-RPC; what is not breaks the channel.
  absl::StatusOr<RpcMessage> Checked(const Value& value);
  Value Roots() const;
  absl::StatusOr<Value> InputResponses(absl::string_view method,
                                       const Value& requests) const;
  // Every page of a list: `each` gets the items of `key`.
  absl::Status Pages(absl::string_view method, absl::string_view key,
                     absl::Duration timeout,
                     const std::function<void(const Value&)>& each);
  void AddMeta(Value& params, std::optional<int64_t> progress_token) const;
  absl::Status Send(const Value& message);
  void SendCancelled(int64_t id, absl::string_view reason);
  absl::Status Broken(absl::Status status) {
    broken_ = status;
    return status;
  }
};

// The MCP session: how it starts and the methods Client offers.
class Client::Impl : public ClientChannel {
 public:
  using ClientChannel::ClientChannel;

  absl::Status Start();
  absl::StatusOr<ToolList> ListTools(absl::Duration timeout);
  absl::StatusOr<CallResult> CallTool(absl::string_view name,
                                      const Value& arguments,
                                      const CallOptions& options);
  absl::Status Ping(absl::Duration timeout);
  absl::StatusOr<std::vector<Resource>> ListResources(absl::Duration timeout);
  absl::StatusOr<ResourceContents> ReadResource(absl::string_view uri,
                                                absl::Duration timeout);
  absl::StatusOr<std::vector<Prompt>> ListPrompts(absl::Duration timeout);
  absl::StatusOr<PromptResult> GetPrompt(
      absl::string_view name, const std::map<std::string, std::string>& args,
      absl::Duration timeout);
  absl::Status Poll();
  void Close();

 private:
  // The two ways a session starts: 2026-07-28 with the probe's
  // DiscoverResult (null: ask for it), or initialize with `version`.
  absl::Status StartModern(const Value* discovered, absl::Time deadline);
  absl::Status StartLegacy(absl::string_view version, absl::Time deadline);
  void ReadServerInfo(const Value& info);
  void ReadCapabilities(const Value& capabilities);
};

}  // namespace mcp
}  // namespace garuda

#endif  // GARUDA_LIB_MCP_CLIENT_IMPL_H_
