// ClientChannel: requests, their answers (and input_required
// rounds), pages of lists, and what the server sends meanwhile.
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
#include "lib/mcp/client_impl.h"
#include "lib/mcp/wire.h"
#include "lib/provider/json.h"

namespace garuda {
namespace mcp {

using acp::Object;
using acp::Set;
using acp::Str;

namespace {

constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;

// A list that pages on for ever (or repeats a cursor) ends here.
constexpr int kMaxPages = 100;
// A request answered with input_required this many times in a row ends.
constexpr int kMaxInputRounds = 8;
// Names, titles and URIs in lists.
constexpr size_t kFieldBytes = 1000;

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

}  // namespace

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

void ClientChannel::AddMeta(Value& params,
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

absl::Status ClientChannel::Send(const Value& message) {
  absl::Status sent = transport_->Send(message);
  // Gone, or stuck with part of a line written: the framing is lost.
  if (!sent.ok() && (sent.code() == absl::StatusCode::kUnavailable ||
                     sent.code() == absl::StatusCode::kDeadlineExceeded)) {
    return Broken(sent);
  }
  return sent;
}

void ClientChannel::SendCancelled(int64_t id, absl::string_view reason) {
  Value params = Object();
  Set(params, "requestId", acp::Num(static_cast<double>(id)));
  Set(params, "reason", Str(reason));
  // Best effort: a server that is gone needs no notice.
  (void)transport_->Send(
      RpcRequest(std::nullopt, "notifications/cancelled", std::move(params)));
}

Value ClientChannel::Roots() const {
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

void ClientChannel::Handle(const RpcMessage& message, int64_t current_id,
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

absl::StatusOr<RpcMessage> ClientChannel::Checked(const Value& value) {
  absl::StatusOr<RpcMessage> message = ReadRpcMessage(value);
  if (!message.ok()) {
    return Broken(absl::DataLossError(
        ServerMessage(name_, absl::StrCat("sent ", message.status().message(),
                                          ", which is not JSON-RPC 2.0"))));
  }
  return message;
}

absl::StatusOr<RpcMessage> ClientChannel::Await(absl::string_view method,
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

absl::StatusOr<Value> ClientChannel::InputResponses(
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

absl::StatusOr<Value> ClientChannel::Call(absl::string_view method,
                                          Value params, absl::Duration timeout,
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

absl::Status ClientChannel::Pages(
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

}  // namespace mcp
}  // namespace garuda
