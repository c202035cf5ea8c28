#include "lib/mcp/client.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/acp/json_rpc.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"
#include "lib/mcp/wire.h"
#include "lib/provider/json.h"

namespace garuda {
namespace mcp {
namespace {

using acp::Object;
using acp::Set;
using acp::Str;

// The revision without a handshake: every request carries these in _meta.
constexpr char kModernVersion[] = "2026-07-28";
constexpr char kMetaVersion[] = "io.modelcontextprotocol/protocolVersion";
constexpr char kMetaClientInfo[] = "io.modelcontextprotocol/clientInfo";
constexpr char kMetaCapabilities[] =
    "io.modelcontextprotocol/clientCapabilities";
constexpr char kMetaServerInfo[] = "io.modelcontextprotocol/serverInfo";

constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kUnsupportedProtocolVersion = -32022;

// A list that pages on for ever (or repeats a cursor) ends here.
constexpr int kMaxPages = 100;
// A request answered with input_required this many times in a row ends.
constexpr int kMaxInputRounds = 8;
// What one Poll() reads at most.
constexpr int kMaxPolledMessages = 1000;
// Names, titles and URIs in lists.
constexpr size_t kFieldBytes = 1000;

bool IsLegacyVersion(absl::string_view version) {
  for (const char* ours : kProtocolVersions) {
    if (version == ours && version != kModernVersion) return true;
  }
  return false;
}

std::string OurVersions() { return absl::StrJoin(kProtocolVersions, ", "); }

// A path as a file:// URI: unreserved characters and '/' as they are, every
// other byte %-escaped.
std::string FileUri(absl::string_view path) {
  std::string uri = "file://";
  for (unsigned char c : path) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9') || c == '/' || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      uri.push_back(static_cast<char>(c));
    } else {
      absl::StrAppend(&uri, "%", absl::Hex(c, absl::kZeroPad2));
    }
  }
  return uri;
}

std::string Field(const Value& object, absl::string_view key) {
  return VisibleText(provider::StringMember(object, key), kFieldBytes);
}

// A JSON-RPC 2.0 request (with an id) or notification (without).
Value RpcRequest(std::optional<int64_t> id, absl::string_view method,
                 Value params) {
  Value message = Object();
  Set(message, "jsonrpc", Str("2.0"));
  if (id.has_value()) Set(message, "id", acp::Num(static_cast<double>(*id)));
  Set(message, "method", Str(method));
  if (params.kind_case() == Value::kStructValue) {
    Set(message, "params", std::move(params));
  }
  return message;
}

absl::StatusCode CodeOfRpcError(int code) {
  switch (code) {
    case kMethodNotFound:
      return absl::StatusCode::kUnimplemented;
    case kInvalidParams:
      return absl::StatusCode::kInvalidArgument;
    default:
      return absl::StatusCode::kUnknown;
  }
}

// What a server said to server/discover: the versions it lists (in a
// DiscoverResult or an UnsupportedProtocolVersionError), and whether it was
// a DiscoverResult. Anything else lists nothing: a server of an earlier
// revision.
struct ProbeAnswer {
  bool listed = false;
  bool discovered = false;
  std::vector<std::string> supported;
};

ProbeAnswer ReadProbeAnswer(const RpcMessage& answer) {
  ProbeAnswer read;
  const google::protobuf::ListValue* list = nullptr;
  if (answer.has_error && answer.error_code == kUnsupportedProtocolVersion) {
    list = provider::ListMember(answer.error_data, "supported");
  } else if (!answer.has_error) {
    list = provider::ListMember(answer.result, "supportedVersions");
    read.discovered = list != nullptr;
  }
  if (list == nullptr) return read;
  read.listed = true;
  for (const Value& v : list->values()) {
    if (v.kind_case() == Value::kStringValue) {
      read.supported.push_back(v.string_value());
    }
  }
  return read;
}

bool Lists(const ProbeAnswer& answer, absl::string_view version) {
  return std::find(answer.supported.begin(), answer.supported.end(), version) !=
         answer.supported.end();
}

}  // namespace

class Client::Impl {
 public:
  Impl(std::string server_name, std::unique_ptr<Transport> transport,
       ConnectOptions options)
      : name_(std::move(server_name)),
        transport_(std::move(transport)),
        options_(std::move(options)) {}

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

 private:
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
  // The two ways a session starts: 2026-07-28 with the probe's
  // DiscoverResult (null: ask for it), or initialize with `version`.
  absl::Status StartModern(const Value* discovered, absl::Time deadline);
  absl::Status StartLegacy(absl::string_view version, absl::Time deadline);
  void ReadServerInfo(const Value& info);
  void ReadCapabilities(const Value& capabilities);
};

void Client::Impl::AddMeta(Value& params,
                           std::optional<int64_t> progress_token) const {
  if (params.kind_case() != Value::kStructValue) params = Object();
  Value meta = Object();
  if (const Value* given = provider::ObjectMember(params, "_meta")) {
    meta = *given;
  }
  if (modern_) {
    Set(meta, kMetaVersion, Str(kModernVersion));
    Value client = Object();
    Set(client, "name", Str(options_.client_name));
    Set(client, "version",
        Str(options_.client_version.empty() ? "0" : options_.client_version));
    Set(meta, kMetaClientInfo, std::move(client));
    Value capabilities = Object();
    Set(capabilities, "roots", Object());
    Set(meta, kMetaCapabilities, std::move(capabilities));
  }
  if (progress_token.has_value()) {
    Set(meta, "progressToken", acp::Num(static_cast<double>(*progress_token)));
  }
  if (meta.struct_value().fields_size() > 0) {
    Set(params, "_meta", std::move(meta));
  }
}

absl::Status Client::Impl::Send(const Value& message) {
  absl::Status sent = transport_->Send(message);
  // Gone, or stuck with part of a line written: the framing is lost.
  if (!sent.ok() && (sent.code() == absl::StatusCode::kUnavailable ||
                     sent.code() == absl::StatusCode::kDeadlineExceeded)) {
    return Broken(sent);
  }
  return sent;
}

void Client::Impl::SendCancelled(int64_t id, absl::string_view reason) {
  Value params = Object();
  Set(params, "requestId", acp::Num(static_cast<double>(id)));
  Set(params, "reason", Str(reason));
  // Best effort: a server that is gone needs no notice.
  (void)transport_->Send(
      RpcRequest(std::nullopt, "notifications/cancelled", std::move(params)));
}

Value Client::Impl::Roots() const {
  Value root = Object();
  Set(root, "uri", Str(FileUri(options_.root_dir)));
  std::string base = options_.root_dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  size_t slash = base.rfind('/');
  Set(root, "name",
      Str(slash == std::string::npos ? base : base.substr(slash + 1)));
  Value roots = acp::List();
  if (!options_.root_dir.empty()) acp::Append(roots, std::move(root));
  Value result = Object();
  Set(result, "roots", std::move(roots));
  return result;
}

void Client::Impl::Handle(const RpcMessage& message, int64_t current_id,
                          const CallOptions* call) {
  if (message.kind == RpcMessage::Kind::kRequest) {
    // Servers of the revisions with a handshake ask the client; this is
    // what we answer (2026-07-28 servers ask through input_required).
    Value answer = Object();
    Set(answer, "jsonrpc", Str("2.0"));
    Set(answer, "id", message.id);
    if (message.method == "ping") {
      Set(answer, "result", Object());
    } else if (message.method == "roots/list") {
      Set(answer, "result", Roots());
    } else {
      Value error = Object();
      Set(error, "code", acp::Num(kMethodNotFound));
      Set(error, "message",
          Str(absl::StrCat("garuda does not offer ",
                           VisibleText(message.method, 200))));
      Set(answer, "error", std::move(error));
    }
    (void)Send(answer);
    return;
  }
  if (message.method == "notifications/tools/list_changed") {
    tools_changed_.store(true);
  } else if (message.method == "notifications/progress" && call != nullptr &&
             call->on_progress) {
    const Value* token = provider::Member(message.params, "progressToken");
    const Value* progress = provider::Member(message.params, "progress");
    if (token == nullptr || progress == nullptr ||
        progress->kind_case() != Value::kNumberValue ||
        acp::IdKey(*token) !=
            acp::IdKey(acp::Num(static_cast<double>(current_id)))) {
      return;
    }
    Progress update;
    update.progress = progress->number_value();
    const Value* total = provider::Member(message.params, "total");
    if (total != nullptr && total->kind_case() == Value::kNumberValue) {
      update.total = total->number_value();
    }
    update.message = VisibleText(
        provider::StringMember(message.params, "message"), kFieldBytes);
    call->on_progress(update);
  }
  // Log messages, resource updates, a server's own cancellations: nothing
  // we act on; they are read and dropped, never printed.
}

absl::StatusOr<RpcMessage> Client::Impl::Checked(const Value& value) {
  absl::StatusOr<RpcMessage> message = ReadRpcMessage(value);
  if (!message.ok()) {
    return Broken(absl::DataLossError(
        ServerMessage(name_, absl::StrCat("sent ", message.status().message(),
                                          ", which is not JSON-RPC 2.0"))));
  }
  return message;
}

absl::StatusOr<RpcMessage> Client::Impl::Await(absl::string_view method,
                                               int64_t id, absl::Time deadline,
                                               absl::Duration timeout,
                                               const CallOptions* call,
                                               bool cancel_on_timeout) {
  const Value want = acp::Num(static_cast<double>(id));
  while (true) {
    absl::StatusOr<Value> got =
        transport_->Receive(deadline, call != nullptr ? call->cancel : nullptr);
    if (!got.ok()) {
      switch (got.status().code()) {
        case absl::StatusCode::kDeadlineExceeded:
          if (cancel_on_timeout) SendCancelled(id, "timed out");
          return absl::DeadlineExceededError(ServerMessage(
              name_, absl::StrCat("did not answer ", method, " within ",
                                  absl::FormatDuration(timeout))));
        case absl::StatusCode::kCancelled:
          SendCancelled(id, "cancelled by the person");
          return absl::CancelledError(
              ServerMessage(name_, absl::StrCat(method, " was cancelled")));
        case absl::StatusCode::kResourceExhausted:
          // The oversized message is gone; it was most likely the answer.
          SendCancelled(id, "answer too large");
          return got.status();
        default:
          return Broken(got.status());
      }
    }
    ASSIGN_OR_RETURN(RpcMessage message, Checked(*got));
    if (message.kind == RpcMessage::Kind::kResponse) {
      if (acp::IdKey(message.id) == acp::IdKey(want)) return message;
      if (probe_id_.has_value() &&
          acp::IdKey(message.id) ==
              acp::IdKey(acp::Num(static_cast<double>(*probe_id_)))) {
        probe_id_.reset();
        const ProbeAnswer read = ReadProbeAnswer(message);
        if (read.discovered && Lists(read, kModernVersion)) {
          late_discover_ = message.result;
          return absl::AbortedError(ServerMessage(
              name_, "answered server/discover late, after initialize"));
        }
      }
      continue;  // a late answer to a request given up (timed out)
    }
    Handle(message, id, call);
  }
}

absl::StatusOr<Value> Client::Impl::InputResponses(
    absl::string_view method, const Value& requests) const {
  Value responses = Object();
  for (const auto& [key, request] : requests.struct_value().fields()) {
    const std::string asked = provider::StringMember(request, "method");
    if (asked == "roots/list") {
      Set(responses, key, Roots());
    } else if (asked == "elicitation/create") {
      // No form reaches the person from a server: declined, as the
      // specification lets a client do.
      Value declined = Object();
      Set(declined, "action", Str("decline"));
      Set(responses, key, std::move(declined));
    } else {
      return absl::UnimplementedError(
          ServerMessage(name_, absl::StrCat("asked, to answer ", method,
                                            ", for ", VisibleText(asked, 200),
                                            ", which garuda does not offer")));
    }
  }
  return responses;
}

absl::StatusOr<Value> Client::Impl::Call(absl::string_view method, Value params,
                                         absl::Duration timeout,
                                         const CallOptions* call) {
  RETURN_IF_ERROR(broken_);
  if (closed_) {
    return absl::FailedPreconditionError(ServerMessage(name_, "is closed"));
  }
  const absl::Time deadline = absl::Now() + timeout;
  for (int round = 0; round < kMaxInputRounds; ++round) {
    const int64_t id = next_id_++;
    Value sent_params = params;
    AddMeta(sent_params, call != nullptr && call->on_progress
                             ? std::optional<int64_t>(id)
                             : std::nullopt);
    RETURN_IF_ERROR(Send(RpcRequest(id, method, std::move(sent_params))));
    ASSIGN_OR_RETURN(RpcMessage answer,
                     Await(method, id, deadline, timeout, call));
    if (answer.has_error) {
      return absl::Status(
          CodeOfRpcError(answer.error_code),
          ServerMessage(name_, absl::StrCat("answered ", method, " with error ",
                                            answer.error_code, ": ",
                                            answer.error_message)));
    }
    if (answer.result.kind_case() != Value::kStructValue) {
      return absl::DataLossError(ServerMessage(
          name_,
          absl::StrCat("answered ", method, " with ",
                       JsonKindName(answer.result), ", not a result object")));
    }
    const std::string type =
        provider::StringMember(answer.result, "resultType");
    if (type.empty() || type == "complete") return std::move(answer.result);
    if (type != "input_required" || !modern_ ||
        (method != "tools/call" && method != "resources/read" &&
         method != "prompts/get")) {
      return absl::DataLossError(ServerMessage(
          name_, absl::StrCat("answered ", method, " with resultType \"",
                              VisibleText(type, 100), "\"")));
    }
    const Value* requests =
        provider::ObjectMember(answer.result, "inputRequests");
    Value responses = Object();
    if (requests != nullptr) {
      ASSIGN_OR_RETURN(responses, InputResponses(method, *requests));
    }
    // The retry: the same request with our answers and the server's state.
    Set(params, "inputResponses", std::move(responses));
    if (const Value* state = provider::Member(answer.result, "requestState")) {
      Set(params, "requestState", *state);
    } else if (params.struct_value().fields().contains("requestState")) {
      params.mutable_struct_value()->mutable_fields()->erase("requestState");
    }
  }
  return absl::DataLossError(ServerMessage(
      name_, absl::StrCat("asked for more input ", kMaxInputRounds,
                          " times in a row to answer ", method)));
}

void Client::Impl::ReadServerInfo(const Value& info) {
  info_.name = Field(info, "name");
  info_.version = Field(info, "version");
  info_.title = Field(info, "title");
}

void Client::Impl::ReadCapabilities(const Value& capabilities) {
  info_.capabilities = capabilities;
  info_.has_tools = provider::ObjectMember(capabilities, "tools") != nullptr;
  info_.has_resources =
      provider::ObjectMember(capabilities, "resources") != nullptr;
  info_.has_prompts =
      provider::ObjectMember(capabilities, "prompts") != nullptr;
}

absl::Status Client::Impl::StartModern(const Value* discovered,
                                       absl::Time deadline) {
  modern_ = true;
  Value result;
  if (discovered != nullptr) {
    result = *discovered;
  } else {
    // Told the version by an error: ask again for the rest.
    ASSIGN_OR_RETURN(
        result, Call("server/discover", Object(),
                     std::max(deadline - absl::Now(), absl::ZeroDuration())));
  }
  const Value* capabilities = provider::ObjectMember(result, "capabilities");
  ReadCapabilities(capabilities != nullptr ? *capabilities : Object());
  info_.instructions =
      VisibleText(provider::StringMember(result, "instructions"), 16 << 10);
  if (const Value* meta = provider::ObjectMember(result, "_meta")) {
    if (const Value* server = provider::ObjectMember(*meta, kMetaServerInfo)) {
      ReadServerInfo(*server);
    }
  }
  info_.protocol_version = kModernVersion;
  transport_->SetProtocolVersion(kModernVersion);
  // list_changed comes on a subscription in this revision.
  const Value* tools = provider::ObjectMember(info_.capabilities, "tools");
  if (tools != nullptr && BoolMember(*tools, "listChanged", false)) {
    const int64_t listen = next_id_++;
    Value params = Object();
    Value filter = Object();
    Set(filter, "toolsListChanged", acp::Bool(true));
    Set(params, "notifications", std::move(filter));
    AddMeta(params, std::nullopt);
    RETURN_IF_ERROR(
        Send(RpcRequest(listen, "subscriptions/listen", std::move(params))));
    listen_id_ = listen;
  }
  return absl::OkStatus();
}

absl::Status Client::Impl::StartLegacy(absl::string_view version,
                                       absl::Time deadline) {
  Value capabilities = Object();
  Value roots = Object();
  Set(roots, "listChanged", acp::Bool(false));
  Set(capabilities, "roots", std::move(roots));
  Value client = Object();
  Set(client, "name", Str(options_.client_name));
  Set(client, "version",
      Str(options_.client_version.empty() ? "0" : options_.client_version));
  Value params = Object();
  Set(params, "protocolVersion", Str(version));
  Set(params, "capabilities", std::move(capabilities));
  Set(params, "clientInfo", std::move(client));
  absl::StatusOr<Value> result =
      Call("initialize", std::move(params),
           std::max(deadline - absl::Now(), absl::ZeroDuration()));
  if (!result.ok() && late_discover_.has_value()) {
    // A slow server of 2026-07-28 answered the probe after all, while
    // initialize waited: it is that revision (initialize, unknown to it,
    // is answered with an error that nobody waits for).
    const Value discovered = *std::move(late_discover_);
    late_discover_.reset();
    return StartModern(&discovered, deadline);
  }
  RETURN_IF_ERROR(result.status());
  const std::string chosen = provider::StringMember(*result, "protocolVersion");
  if (!IsLegacyVersion(chosen)) {
    return absl::FailedPreconditionError(ServerMessage(
        name_,
        absl::StrCat("answered initialize with protocol version \"",
                     VisibleText(chosen, 100),
                     "\", which garuda does not speak (", OurVersions(), ")")));
  }
  info_.protocol_version = chosen;
  if (const Value* server = provider::ObjectMember(*result, "serverInfo")) {
    ReadServerInfo(*server);
  }
  const Value* server_capabilities =
      provider::ObjectMember(*result, "capabilities");
  ReadCapabilities(server_capabilities != nullptr ? *server_capabilities
                                                  : Object());
  info_.instructions =
      VisibleText(provider::StringMember(*result, "instructions"), 16 << 10);
  transport_->SetProtocolVersion(chosen);
  return Send(RpcRequest(std::nullopt, "notifications/initialized", Value()));
}

absl::Status Client::Impl::Start() {
  const absl::Time deadline = absl::Now() + options_.start_timeout;
  // 1. The 2026-07-28 probe, server/discover, with its _meta. A server of
  // that revision answers with its versions; one of the earlier revisions
  // answers with an error or not at all, and gets initialize.
  modern_ = true;
  const int64_t id = next_id_++;
  Value params = Object();
  AddMeta(params, std::nullopt);
  modern_ = false;
  RETURN_IF_ERROR(Send(RpcRequest(id, "server/discover", std::move(params))));
  const absl::Duration probe =
      std::min(options_.discover_timeout, options_.start_timeout);
  absl::StatusOr<RpcMessage> answer =
      Await("server/discover", id, std::min(deadline, absl::Now() + probe),
            probe, nullptr, /*cancel_on_timeout=*/false);
  if (!answer.ok()) {
    if (answer.status().code() != absl::StatusCode::kDeadlineExceeded) {
      return answer.status();
    }
    // 2a. No answer yet: taken for an earlier revision, but a late answer
    // to the probe is still looked for while initialize waits.
    probe_id_ = id;
    return StartLegacy(kProtocolVersions[1], deadline);
  }
  const ProbeAnswer read = ReadProbeAnswer(*answer);
  if (!read.listed) return StartLegacy(kProtocolVersions[1], deadline);
  if (Lists(read, kModernVersion)) {
    return StartModern(read.discovered ? &answer->result : nullptr, deadline);
  }
  // 2b. A server that lists only earlier revisions (a dual-era one that
  // prefers them): the best of those we speak.
  for (const char* version : kProtocolVersions) {
    if (IsLegacyVersion(version) && Lists(read, version)) {
      return StartLegacy(version, deadline);
    }
  }
  return absl::FailedPreconditionError(ServerMessage(
      name_, absl::StrCat("speaks protocol versions ",
                          VisibleText(absl::StrJoin(read.supported, ", "), 300),
                          " and none of garuda's (", OurVersions(), ")")));
}

absl::Status Client::Impl::Pages(
    absl::string_view method, absl::string_view key, absl::Duration timeout,
    const std::function<void(const Value&)>& each) {
  const absl::Time deadline = absl::Now() + timeout;
  std::set<std::string> cursors;
  std::string cursor;
  for (int page = 0; page < kMaxPages; ++page) {
    Value params = Object();
    if (!cursor.empty()) Set(params, "cursor", Str(cursor));
    ASSIGN_OR_RETURN(Value result, Call(method, std::move(params),
                                        std::max(deadline - absl::Now(),
                                                 absl::ZeroDuration())));
    const google::protobuf::ListValue* items =
        provider::ListMember(result, key);
    if (items == nullptr) {
      return absl::DataLossError(ServerMessage(
          name_,
          absl::StrCat("answered ", method, " without a \"", key, "\" list")));
    }
    for (const Value& item : items->values()) each(item);
    cursor = provider::StringMember(result, "nextCursor");
    if (cursor.empty()) return absl::OkStatus();
    if (!cursors.insert(cursor).second) {
      return absl::DataLossError(
          ServerMessage(name_, absl::StrCat("gave the same ", method,
                                            " cursor twice (its pages loop)")));
    }
  }
  return absl::DataLossError(ServerMessage(
      name_, absl::StrCat("sent more than ", kMaxPages, " pages of ", method)));
}

absl::StatusOr<ToolList> Client::Impl::ListTools(absl::Duration timeout) {
  tools_changed_.store(false);
  ToolList list;
  std::set<std::string> names;
  size_t over = 0;
  size_t listed = 0;
  RETURN_IF_ERROR(Pages("tools/list", "tools", timeout, [&](const Value& item) {
    ++listed;
    if (list.tools.size() >= options_.max_tools) {
      ++over;
      return;
    }
    absl::StatusOr<Tool> tool = ReadTool(item);
    if (!tool.ok()) {
      list.problems.push_back(ServerMessage(
          name_, absl::StrCat("tool left out: ", tool.status().message())));
      return;
    }
    if (!names.insert(tool->name).second) {
      list.problems.push_back(ServerMessage(
          name_, absl::StrCat("tool \"", tool->name,
                              "\" listed twice; the first is kept")));
      return;
    }
    list.tools.push_back(*std::move(tool));
  }));
  if (over > 0) {
    list.problems.push_back(ServerMessage(
        name_, absl::StrCat("listed ", listed, " tools; only the first ",
                            options_.max_tools, " valid ones are offered (",
                            over, " left out)")));
  }
  return list;
}

absl::StatusOr<CallResult> Client::Impl::CallTool(absl::string_view name,
                                                  const Value& arguments,
                                                  const CallOptions& options) {
  Value params = Object();
  Set(params, "name", Str(name));
  Set(params, "arguments",
      arguments.kind_case() == Value::kStructValue ? arguments : Object());
  ASSIGN_OR_RETURN(Value result, Call("tools/call", std::move(params),
                                      options.timeout, &options));
  CallResult call;
  call.is_error = BoolMember(result, "isError", false);
  std::vector<std::string> parts;
  if (const Value* content = provider::Member(result, "content")) {
    if (content->kind_case() != Value::kListValue) {
      return absl::DataLossError(ServerMessage(
          name_, absl::StrCat("answered tools/call \"", VisibleText(name, 200),
                              "\" with content that is ",
                              JsonKindName(*content), ", not a list")));
    }
    for (const Value& block : content->list_value().values()) {
      parts.push_back(RenderContent(block));
    }
  }
  if (const Value* structured = provider::Member(result, "structuredContent")) {
    if (JsonSize(*structured) > options_.max_result_bytes) {
      call.truncated = true;
      parts.push_back(absl::StrCat("[structured content of ",
                                   JsonSize(*structured),
                                   " bytes left out: over the limit of ",
                                   options_.max_result_bytes, "]"));
    } else {
      call.structured_content = *structured;
      if (parts.empty()) parts.push_back(provider::ToJson(*structured));
    }
  }
  bool cut = false;
  call.text =
      VisibleText(absl::StrJoin(parts, "\n"), options_.max_result_bytes, &cut);
  if (cut) {
    call.truncated = true;
    absl::StrAppend(&call.text, "\n[cut at ", options_.max_result_bytes,
                    " bytes]");
  }
  return call;
}

absl::Status Client::Impl::Ping(absl::Duration timeout) {
  // 2026-07-28 has no ping: server/discover is the cheapest round trip.
  return Call(modern_ ? "server/discover" : "ping", Object(), timeout).status();
}

absl::StatusOr<std::vector<Resource>> Client::Impl::ListResources(
    absl::Duration timeout) {
  std::vector<Resource> resources;
  RETURN_IF_ERROR(
      Pages("resources/list", "resources", timeout, [&](const Value& item) {
        Resource resource;
        resource.uri = Field(item, "uri");
        if (resource.uri.empty()) return;
        resource.name = Field(item, "name");
        resource.title = Field(item, "title");
        resource.description = Field(item, "description");
        resource.mime_type = Field(item, "mimeType");
        resources.push_back(std::move(resource));
      }));
  return resources;
}

absl::StatusOr<ResourceContents> Client::Impl::ReadResource(
    absl::string_view uri, absl::Duration timeout) {
  Value params = Object();
  Set(params, "uri", Str(uri));
  ASSIGN_OR_RETURN(Value result,
                   Call("resources/read", std::move(params), timeout));
  const google::protobuf::ListValue* contents =
      provider::ListMember(result, "contents");
  if (contents == nullptr || contents->values_size() == 0 ||
      contents->values(0).kind_case() != Value::kStructValue) {
    return absl::DataLossError(ServerMessage(
        name_, absl::StrCat("answered resources/read ", VisibleText(uri, 300),
                            " without contents")));
  }
  const Value& first = contents->values(0);
  ResourceContents read;
  read.uri = Field(first, "uri");
  read.mime_type = Field(first, "mimeType");
  if (provider::HasStringMember(first, "blob")) {
    read.is_blob = true;
    read.blob_bytes = provider::StringMember(first, "blob").size() * 3 / 4;
    read.text = absl::StrCat("[", read.mime_type, ", about ", read.blob_bytes,
                             " bytes of binary data]");
  } else {
    bool cut = false;
    read.text = VisibleText(provider::StringMember(first, "text"),
                            options_.max_result_bytes, &cut);
    if (cut) absl::StrAppend(&read.text, "\n[cut]");
  }
  return read;
}

absl::StatusOr<std::vector<Prompt>> Client::Impl::ListPrompts(
    absl::Duration timeout) {
  std::vector<Prompt> prompts;
  RETURN_IF_ERROR(
      Pages("prompts/list", "prompts", timeout, [&](const Value& item) {
        Prompt prompt;
        prompt.name = Field(item, "name");
        if (prompt.name.empty()) return;
        prompt.title = Field(item, "title");
        prompt.description = Field(item, "description");
        if (const google::protobuf::ListValue* args =
                provider::ListMember(item, "arguments")) {
          for (const Value& arg : args->values()) {
            PromptArgument argument;
            argument.name = Field(arg, "name");
            argument.description = Field(arg, "description");
            argument.required = BoolMember(arg, "required", false);
            prompt.arguments.push_back(std::move(argument));
          }
        }
        prompts.push_back(std::move(prompt));
      }));
  return prompts;
}

absl::StatusOr<PromptResult> Client::Impl::GetPrompt(
    absl::string_view name, const std::map<std::string, std::string>& args,
    absl::Duration timeout) {
  Value params = Object();
  Set(params, "name", Str(name));
  Value arguments = Object();
  for (const auto& [key, value] : args) Set(arguments, key, Str(value));
  Set(params, "arguments", std::move(arguments));
  ASSIGN_OR_RETURN(Value result,
                   Call("prompts/get", std::move(params), timeout));
  const google::protobuf::ListValue* messages =
      provider::ListMember(result, "messages");
  if (messages == nullptr) {
    return absl::DataLossError(ServerMessage(
        name_, absl::StrCat("answered prompts/get \"", VisibleText(name, 200),
                            "\" without a \"messages\" list")));
  }
  PromptResult prompt;
  prompt.description = Field(result, "description");
  size_t total = 0;
  for (const Value& message : messages->values()) {
    PromptMessage rendered;
    rendered.role = Field(message, "role");
    const Value* content = provider::Member(message, "content");
    rendered.text = VisibleText(
        content != nullptr ? RenderContent(*content) : std::string(),
        options_.max_result_bytes);
    total += rendered.text.size();
    if (total > options_.max_result_bytes) {
      return absl::ResourceExhaustedError(ServerMessage(
          name_, absl::StrCat("answered prompts/get \"", VisibleText(name, 200),
                              "\" with more than ", options_.max_result_bytes,
                              " bytes")));
    }
    prompt.messages.push_back(std::move(rendered));
  }
  return prompt;
}

absl::Status Client::Impl::Poll() {
  RETURN_IF_ERROR(broken_);
  // A server that never stops sending must not keep Poll from returning:
  // the rest waits for the next request or Poll.
  for (int read = 0; read < kMaxPolledMessages; ++read) {
    absl::StatusOr<Value> got = transport_->Receive(absl::Now(), nullptr);
    if (!got.ok()) {
      if (got.status().code() == absl::StatusCode::kDeadlineExceeded) {
        return absl::OkStatus();
      }
      if (got.status().code() == absl::StatusCode::kResourceExhausted) {
        continue;
      }
      return Broken(got.status());
    }
    ASSIGN_OR_RETURN(RpcMessage message, Checked(*got));
    if (message.kind != RpcMessage::Kind::kResponse) {
      Handle(message, 0, nullptr);
    }
  }
  return absl::OkStatus();
}

void Client::Impl::Close() {
  if (closed_) return;
  closed_ = true;
  if (listen_id_.has_value() && broken_.ok()) {
    SendCancelled(*listen_id_, "the client is closing");
  }
  transport_->Close();
}

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(
    std::string server_name, std::unique_ptr<Transport> transport,
    ConnectOptions options) {
  if (transport == nullptr) {
    return absl::InvalidArgumentError(
        ServerMessage(server_name, "no transport to connect over"));
  }
  auto impl = std::make_unique<Impl>(std::move(server_name),
                                     std::move(transport), std::move(options));
  absl::Status started = impl->Start();
  if (!started.ok()) {
    impl->Close();
    return started;
  }
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Client::~Client() { Close(); }

const std::string& Client::server_name() const { return impl_->name_; }

const ServerInfo& Client::server_info() const { return impl_->info_; }

absl::StatusOr<ToolList> Client::ListTools(absl::Duration timeout) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->ListTools(timeout);
}

absl::StatusOr<CallResult> Client::CallTool(absl::string_view name,
                                            const Value& arguments,
                                            const CallOptions& options) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->CallTool(name, arguments, options);
}

absl::Status Client::Ping(absl::Duration timeout) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->Ping(timeout);
}

bool Client::ToolsChanged() const { return impl_->tools_changed_.load(); }

absl::StatusOr<std::vector<Resource>> Client::ListResources(
    absl::Duration timeout) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->ListResources(timeout);
}

absl::StatusOr<ResourceContents> Client::ReadResource(absl::string_view uri,
                                                      absl::Duration timeout) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->ReadResource(uri, timeout);
}

absl::StatusOr<std::vector<Prompt>> Client::ListPrompts(
    absl::Duration timeout) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->ListPrompts(timeout);
}

absl::StatusOr<PromptResult> Client::GetPrompt(
    absl::string_view name, const std::map<std::string, std::string>& args,
    absl::Duration timeout) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->GetPrompt(name, args, timeout);
}

absl::Status Client::Poll() {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->Poll();
}

absl::Status Client::broken() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->broken_;
}

void Client::Close() {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->Close();
}

}  // namespace mcp
}  // namespace garuda
