// A client of the Model Context Protocol (MCP): JSON-RPC 2.0 to one server,
// over newline-delimited stdio (a server the stager started in its sandbox)
// or over Streamable HTTP (a remote server, reached only through the
// session's HTTP proxy). docs/mcp.md, "Protocol" and "Bad servers".
//
// A server is third-party code: everything it sends is checked before use.
// Every error is an absl::Status whose message names the server and says what
// it did ("mcp server 'files': sent a line that is not JSON: ..."); every
// text handed out is valid UTF-8 with terminal control bytes removed.
#ifndef GARUDA_LIB_MCP_CLIENT_H_
#define GARUDA_LIB_MCP_CLIENT_H_

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/struct.pb.h"
#include "lib/base/cancel_flag.h"
#include "lib/base/unique_fd.h"

namespace garuda {
namespace mcp {

using google::protobuf::Value;

// The revisions we speak, newest first; the first is what we ask for.
inline constexpr const char* kProtocolVersions[] = {"2026-07-28", "2025-11-25",
                                                    "2025-06-18"};

// One message from a server (a line, an HTTP body, an SSE event's data):
// anything longer is refused before it is parsed.
inline constexpr size_t kMaxMessageBytes = 8 << 20;

// One JSON-RPC channel to one server. Send and Receive are called by one
// thread at a time (the Client's).
class Transport {
 public:
  virtual ~Transport() = default;

  // Sends one JSON-RPC message (request, notification or response).
  virtual absl::Status Send(const Value& message) = 0;

  // The next message from the server, parsed but not yet checked as
  // JSON-RPC. DEADLINE_EXCEEDED at `deadline`, CANCELLED when `cancel` (may
  // be null) is set, UNAVAILABLE when the server closed its end (exited),
  // DATA_LOSS for bytes that are not one JSON value or are too long. Every
  // message names the server.
  virtual absl::StatusOr<Value> Receive(absl::Time deadline,
                                        const CancelFlag* cancel) = 0;

  // The version initialize settled on (HTTP sends it in a header on every
  // later request).
  virtual void SetProtocolVersion(absl::string_view version) {}

  // Ends the channel: stdio closes the server's stdin (a server then exits,
  // as the specification's shutdown says); HTTP ends its session.
  virtual void Close() {}
};

// Newline-delimited JSON over the server's stdin and stdout (the stager hands
// both over as descriptors). A line is one message without embedded newline.
// A message that cannot be written within `send_timeout` (a server that
// stops reading its stdin) fails, and the channel with it (half a line was
// sent).
std::unique_ptr<Transport> StdioTransport(
    UniqueFd to_server, UniqueFd from_server, std::string server_name,
    absl::Duration send_timeout = absl::Seconds(30));

struct HttpOptions {
  std::string url;  // https:// (or http:// for a test server)
  // Sent with every request ("Authorization" and the like): read here, never
  // shown to the model nor written into a message.
  std::vector<std::pair<std::string, std::string>> headers;
  // The session's HTTP proxy, "127.0.0.1:PORT": the only way out. Empty is
  // refused (there is no direct connection) unless `proxy_unix_address` is
  // set.
  std::string proxy_host_port;
  // A remote server's own proxy as garuda-stager gives it to the agent
  // (ConnectMcpProxy, lib/staging/mcp_remote_client.h): the Unix socket
  // address (abstract: a leading '\0') each connection goes to, in place of
  // proxy_host_port's TCP, which then only names the proxy for CONNECT.
  std::string proxy_unix_address;
  absl::Duration connect_timeout = absl::Seconds(30);
};

// Streamable HTTP: each message is a POST; the answer is JSON or an SSE
// stream; the Mcp-Session-Id the server gives is sent back; DELETE ends the
// session.
absl::StatusOr<std::unique_ptr<Transport>> HttpTransport(
    HttpOptions options, std::string server_name);

struct ConnectOptions {
  // The project root, offered as the only root (file:// URI).
  std::string root_dir;
  // The whole start: the probe below, then initialize and its answer (a
  // listing has its own limit, ListTools' argument).
  absl::Duration start_timeout = absl::Seconds(30);
  // The first message is server/discover (the 2026-07-28 revision's probe);
  // a server that does not answer it this soon is taken for one of the
  // earlier revisions and sent initialize (within start_timeout).
  absl::Duration discover_timeout = absl::Seconds(5);
  std::string client_name = "garuda";
  std::string client_version;
  // At most this many tools are kept; the rest are dropped with a message.
  size_t max_tools = 500;
  // A tool result's rendered text is cut here (with a note saying so); a
  // structured result larger than this is dropped (with a note).
  size_t max_result_bytes = 256 << 10;
};

struct ServerInfo {
  std::string name;  // as the server says (made visible)
  std::string version;
  std::string title;
  std::string instructions;
  std::string protocol_version;  // the negotiated one
  Value capabilities;  // the server's, as sent (JSON: not for a terminal)
  bool has_tools = false;
  bool has_resources = false;
  bool has_prompts = false;
};

struct Tool {
  std::string name;  // as the server names it (checked: visible, non-empty)
  std::string title;
  std::string description;  // made visible
  Value input_schema;       // a JSON Schema object, checked
  std::optional<Value> output_schema;
  // The server's hints: shown, never trusted as a permission.
  bool read_only_hint = false;
  bool destructive_hint = true;
  bool idempotent_hint = false;
  bool open_world_hint = true;
};

struct ToolList {
  std::vector<Tool> tools;
  // Tools dropped (invalid name or schema, a duplicate, over the cap), one
  // message each, naming the server and the tool.
  std::vector<std::string> problems;
};

struct Progress {
  double progress = 0;
  std::optional<double> total;
  std::string message;  // made visible
};

struct CallOptions {
  absl::Duration timeout = absl::Minutes(5);
  // Set (Ctrl-C): the call sends notifications/cancelled and returns
  // CANCELLED at once.
  const CancelFlag* cancel = nullptr;
  // Called for each progress notification of this call; with it set, the
  // request carries a progress token.
  std::function<void(const Progress&)> on_progress;
};

struct CallResult {
  // The content blocks rendered as text: text as it is, an image or audio
  // block as a line naming its type and size, a resource link or embedded
  // resource by its URI (and its text). Valid UTF-8, visible, capped.
  std::string text;
  std::optional<Value> structured_content;
  bool is_error = false;
  bool truncated = false;  // text or structured content was capped
};

struct Resource {
  std::string uri;
  std::string name;
  std::string title;
  std::string description;
  std::string mime_type;
};

struct ResourceContents {
  std::string uri;
  std::string mime_type;
  std::string text;  // a text resource (visible); a blob as a note
  bool is_blob = false;
  size_t blob_bytes = 0;
};

struct PromptArgument {
  std::string name;
  std::string description;
  bool required = false;
};

struct Prompt {
  std::string name;
  std::string title;
  std::string description;
  std::vector<PromptArgument> arguments;
};

struct PromptMessage {
  std::string role;  // "user" or "assistant"
  std::string text;  // rendered like a tool result's content
};

struct PromptResult {
  std::string description;
  std::vector<PromptMessage> messages;
};

// One connected server. One request at a time: calls from several threads
// wait their turn. What the server sends between requests (a ping, roots/list,
// list_changed) is read and answered during the next request or Poll().
class Client {
 public:
  // initialize (offering kProtocolVersions[0]; the server's answer must be
  // one of kProtocolVersions), then notifications/initialized. Fails when
  // the server does not answer in options.start_timeout, exits, or sends
  // what is not MCP.
  static absl::StatusOr<std::unique_ptr<Client>> Connect(
      std::string server_name, std::unique_ptr<Transport> transport,
      ConnectOptions options);

  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  const std::string& server_name() const;
  const ServerInfo& server_info() const;

  // tools/list, every page (a loop of pages or more than max_tools ends it
  // with a message in `problems`).
  absl::StatusOr<ToolList> ListTools(
      absl::Duration timeout = absl::Seconds(30));

  // tools/call. A tool's own failure (isError) is a CallResult with
  // is_error; a protocol error (unknown tool, bad arguments) is a Status.
  absl::StatusOr<CallResult> CallTool(absl::string_view name,
                                      const Value& arguments,
                                      const CallOptions& options);

  // ping (2025 revisions) or, since 2026-07-28 has no ping, server/discover.
  absl::Status Ping(absl::Duration timeout = absl::Seconds(10));

  // True when notifications/tools/list_changed arrived since the last
  // ListTools (read during requests and Poll()).
  bool ToolsChanged() const;

  absl::StatusOr<std::vector<Resource>> ListResources(
      absl::Duration timeout = absl::Seconds(30));
  absl::StatusOr<ResourceContents> ReadResource(
      absl::string_view uri, absl::Duration timeout = absl::Seconds(30));
  absl::StatusOr<std::vector<Prompt>> ListPrompts(
      absl::Duration timeout = absl::Seconds(30));
  absl::StatusOr<PromptResult> GetPrompt(
      absl::string_view name, const std::map<std::string, std::string>& args,
      absl::Duration timeout = absl::Seconds(30));

  // Reads and answers what the server has already sent, without waiting.
  absl::Status Poll();

  // After an error that broke the channel (the server exited, sent what is
  // not MCP), every later call returns this status; OK while usable.
  absl::Status broken() const;

  // Ends the session (closes the transport). The destructor does it too.
  void Close();

 private:
  class Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The name a model sees for a server's tool: "mcp__<server>__<tool>", each
// character outside [A-Za-z0-9_-] replaced by '_'. When a character was
// replaced or the name is longer than `max_len`, it ends with '_' and 8 hex
// digits of the SHA-256 of the original "server\0tool" (cut before them to
// fit), so two tools never share a name by a replacement or a cut.
std::string ModelToolName(absl::string_view server, absl::string_view tool,
                          size_t max_len = 64);

}  // namespace mcp
}  // namespace garuda

#endif  // GARUDA_LIB_MCP_CLIENT_H_
