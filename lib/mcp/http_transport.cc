// Streamable HTTP: each message a POST through the session's proxy (libcurl
// over lib/provider/http.h, tunnelled with CONNECT); the answer JSON or an
// SSE stream whose events are messages. Each request's POST runs on a
// thread of its own, so that Receive sees progress while a call runs, and a
// notification may go out meanwhile.
#include <cmath>
#include <condition_variable>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/acp/json_rpc.h"
#include "lib/mcp/client.h"
#include "lib/mcp/wire.h"
#include "lib/provider/http.h"
#include "lib/provider/json.h"
#include "lib/provider/sse.h"

namespace garuda {
namespace mcp {
namespace {

constexpr absl::Duration kCancelPoll = absl::Milliseconds(50);
// Messages received and not yet read, before notifications are dropped.
constexpr size_t kMaxInbox = 4096;
// Of an HTTP error's body, this much goes into the message.
constexpr size_t kErrorQuote = 200;

// A header value as the 2026-07-28 transport carries it: plain when it is
// visible ASCII without space at either end, else "=?base64?...?=".
std::string HeaderValue(absl::string_view value) {
  bool plain = value.empty() || (value.front() != ' ' && value.back() != ' ');
  for (unsigned char c : value) {
    if (c < 0x20 || c > 0x7e) plain = false;
  }
  if (plain) return std::string(value);
  return absl::StrCat("=?base64?", absl::Base64Escape(value), "?=");
}

bool SafeHeaderText(absl::string_view text) {
  for (unsigned char c : text) {
    if (c == '\r' || c == '\n' || c == 0) return false;
  }
  return true;
}

class Http : public Transport {
 public:
  Http(HttpOptions options, std::string name)
      : options_(std::move(options)), name_(std::move(name)) {}

  ~Http() override { Close(); }

  absl::Status Send(const Value& message) override {
    if (closing_) {
      return absl::FailedPreconditionError(ServerMessage(name_, "is closed"));
    }
    Reap();
    const std::string method = provider::StringMember(message, "method");
    const Value* id = provider::Member(message, "id");
    const Value* params = provider::ObjectMember(message, "params");
    if (method == "notifications/cancelled" && params != nullptr) {
      // Closing the request's stream is the cancellation (2026-07-28); the
      // notification still goes to servers of the earlier revisions.
      if (const Value* request = provider::Member(*params, "requestId")) {
        std::lock_guard<std::mutex> lock(mu_);
        auto post = aborts_.find(acp::IdKey(*request));
        if (post != aborts_.end()) post->second->Cancel();
      }
    }
    provider::HttpRequest request;
    request.url = options_.url;
    request.body = acp::JsonLine(message);
    request.headers = {"Content-Type: application/json",
                       "Accept: application/json, text/event-stream"};
    for (const auto& [header, value] : options_.headers) {
      request.headers.push_back(absl::StrCat(header, ": ", value));
    }
    std::string version;
    {
      std::lock_guard<std::mutex> lock(mu_);
      version = version_;
      if (!session_id_.empty()) {
        request.headers.push_back(
            absl::StrCat("Mcp-Session-Id: ", session_id_));
      }
    }
    if (params != nullptr) {
      if (const Value* meta = provider::ObjectMember(*params, "_meta")) {
        std::string asked = provider::StringMember(
            *meta, "io.modelcontextprotocol/protocolVersion");
        if (!asked.empty()) version = asked;
      }
    }
    if (!version.empty() && method != "initialize") {
      request.headers.push_back(
          absl::StrCat("MCP-Protocol-Version: ", version));
    }
    if (!method.empty()) {
      request.headers.push_back(absl::StrCat("Mcp-Method: ", method));
      if (params != nullptr &&
          (method == "tools/call" || method == "prompts/get" ||
           method == "resources/read")) {
        std::string target = provider::StringMember(
            *params, method == "resources/read" ? "uri" : "name");
        request.headers.push_back(
            absl::StrCat("Mcp-Name: ", HeaderValue(target)));
      }
      if (params != nullptr && method == "tools/call")
        AddParamHeaders(*params, request);
    }
    const bool is_request = !method.empty() && id != nullptr;
    auto cancel = std::make_shared<CancelFlag>();
    std::string key;
    if (is_request) {
      key = acp::IdKey(*id);
      std::lock_guard<std::mutex> lock(mu_);
      aborts_[key] = cancel;
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::lock_guard<std::mutex> lock(mu_);
    posts_.push_back(
        Post{std::thread([this, request = std::move(request), cancel, key, done,
                          method, id_value = id != nullptr ? *id : Value()] {
               Exchange(request, method, cancel.get(),
                        key.empty() ? nullptr : &id_value);
               {
                 std::lock_guard<std::mutex> lock(mu_);
                 if (!key.empty()) aborts_.erase(key);
               }
               done->store(true);
             }),
             done});
    return absl::OkStatus();
  }

  absl::StatusOr<Value> Receive(absl::Time deadline,
                                const CancelFlag* cancel) override {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      if (!inbox_.empty()) {
        absl::StatusOr<Value> next = std::move(inbox_.front());
        inbox_.pop_front();
        return next;
      }
      if (cancel != nullptr && cancel->cancelled()) {
        return absl::CancelledError(ServerMessage(name_, "cancelled"));
      }
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        return absl::DeadlineExceededError(
            ServerMessage(name_, "sent nothing in time"));
      }
      arrived_.wait_for(
          lock, absl::ToChronoMilliseconds(std::min(left, kCancelPoll)));
    }
  }

  void SetProtocolVersion(absl::string_view version) override {
    std::lock_guard<std::mutex> lock(mu_);
    version_ = std::string(version);
  }

  void Close() override {
    if (closing_.exchange(true)) return;
    std::list<Post> posts;
    std::string session;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& [key, cancel] : aborts_) cancel->Cancel();
      posts.swap(posts_);
      session = session_id_;
    }
    for (Post& post : posts) post.thread.join();
    if (!session.empty()) {
      // A server of the earlier revisions keeps a session until told: DELETE
      // ends it (best effort, briefly; the server may refuse with 405).
      provider::HttpRequest end;
      end.method = "DELETE";
      end.url = options_.url;
      end.headers = {absl::StrCat("Mcp-Session-Id: ", session)};
      for (const auto& [header, value] : options_.headers) {
        end.headers.push_back(absl::StrCat(header, ": ", value));
      }
      provider::HttpOptions http;
      http.proxy = options_.proxy_host_port;
      http.proxy_unix_address = options_.proxy_unix_address;
      http.connect_timeout = absl::Seconds(5);
      http.idle_timeout = absl::Seconds(5);
      (void)provider::PostStreaming(end, http, nullptr, [](absl::string_view) {
        return absl::OkStatus();
      });
    }
  }

 private:
  struct Post {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  void Push(absl::StatusOr<Value> message) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      // A server streaming notifications faster than they are read: past
      // the cap they are dropped (answers and errors never are).
      if (inbox_.size() >= kMaxInbox && message.ok() &&
          provider::Member(*message, "id") == nullptr) {
        return;
      }
      inbox_.push_back(std::move(message));
    }
    arrived_.notify_all();
  }

  // The answer to a request that has no JSON-RPC body (an HTTP error): a
  // JSON-RPC error for its id, so that the client can fall back (a server
  // of the earlier revisions refusing server/discover) or report it.
  void PushHttpError(const Value& id, long status, absl::string_view body) {
    Value error = acp::Object();
    acp::Set(error, "code", acp::Num(-32000));
    acp::Set(error, "message",
             acp::Str(absl::StrCat("HTTP ", status, body.empty() ? "" : ": ",
                                   body.substr(0, kErrorQuote))));
    Value answer = acp::Object();
    acp::Set(answer, "jsonrpc", acp::Str("2.0"));
    acp::Set(answer, "id", id);
    acp::Set(answer, "error", std::move(error));
    Push(std::move(answer));
  }

  // "Mcp-Param-<name>: <value>" for each x-mcp-header of the tool called
  // whose argument is there (the tool's list said which).
  void AddParamHeaders(const Value& params, provider::HttpRequest& request) {
    std::vector<HeaderParam> wanted;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto tool = header_params_.find(provider::StringMember(params, "name"));
      if (tool == header_params_.end()) return;
      wanted = tool->second;
    }
    const Value* arguments = provider::ObjectMember(params, "arguments");
    for (const HeaderParam& param : wanted) {
      const Value* value = arguments;
      for (const std::string& key : param.path) {
        value = value != nullptr ? provider::Member(*value, key) : nullptr;
      }
      if (value == nullptr) continue;
      std::string text;
      if (value->kind_case() == Value::kStringValue) {
        text = value->string_value();
      } else if (value->kind_case() == Value::kBoolValue) {
        text = value->bool_value() ? "true" : "false";
      } else if (value->kind_case() == Value::kNumberValue &&
                 std::abs(value->number_value()) < 9007199254740992.0 &&
                 value->number_value() ==
                     static_cast<double>(
                         static_cast<int64_t>(value->number_value()))) {
        text = absl::StrCat(static_cast<int64_t>(value->number_value()));
      } else {
        continue;
      }
      // libcurl drops "Name:" with nothing after it; "Name;" sends it empty.
      request.headers.push_back(
          text.empty() ? absl::StrCat("Mcp-Param-", param.name, ";")
                       : absl::StrCat("Mcp-Param-", param.name, ": ",
                                      HeaderValue(text)));
    }
  }

  // A tools/list answer passing through: which arguments go into headers.
  void NoteHeaderParams(const Value& result) {
    const google::protobuf::ListValue* tools =
        provider::ListMember(result, "tools");
    if (tools == nullptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    for (const Value& tool : tools->values()) {
      const Value* schema = provider::ObjectMember(tool, "inputSchema");
      if (schema == nullptr) continue;
      absl::StatusOr<std::vector<HeaderParam>> params =
          ReadHeaderParams(*schema);
      if (params.ok() && !params->empty()) {
        header_params_[provider::StringMember(tool, "name")] = *params;
      }
    }
  }

  void Exchange(const provider::HttpRequest& request, const std::string& method,
                const CancelFlag* cancel, const Value* id) {
    provider::HttpOptions http;
    http.connect_timeout = options_.connect_timeout;
    http.proxy = options_.proxy_host_port;
    http.proxy_unix_address = options_.proxy_unix_address;
    http.keep_headers = {"mcp-session-id"};
    // Kept as soon as it arrives: the answer to initialize may stream, and
    // the next request must already carry it.
    http.on_header = [this](const std::string&, const std::string& value) {
      if (!SafeHeaderText(value)) return;
      std::lock_guard<std::mutex> lock(mu_);
      session_id_ = value;
    };
    http.max_error_body = kMaxMessageBytes + 1;
    // Whether the answer to `id` came: a stream that ends without it lost
    // the request (the 2026-07-28 transport does not resume streams).
    bool answered = false;
    const std::string want = id != nullptr ? acp::IdKey(*id) : "";
    auto deliver = [&](absl::StatusOr<Value> message) {
      if (message.ok() && provider::Member(*message, "method") == nullptr) {
        // An error of id null in the answer to this POST (a request the
        // server could not take) is the answer to this request.
        const Value* null_id = provider::Member(*message, "id");
        if (id != nullptr && null_id != nullptr &&
            null_id->kind_case() == Value::kNullValue) {
          acp::Set(*message, "id", *id);
        }
        const Value* answer_id = provider::Member(*message, "id");
        if (answer_id != nullptr && acp::IdKey(*answer_id) == want) {
          answered = true;
          if (method == "tools/list") {
            if (const Value* result =
                    provider::ObjectMember(*message, "result")) {
              NoteHeaderParams(*result);
            }
          }
        }
      }
      Push(std::move(message));
    };
    provider::SseParser events(
        [&](const provider::SseEvent& event) {
          if (event.data.empty()) return absl::OkStatus();  // a priming event
          deliver(ParseServerMessage(name_, event.data));
          return absl::OkStatus();
        },
        kMaxMessageBytes);
    provider::HttpOutcome outcome = provider::PostStreaming(
        request, http, cancel,
        [&events](absl::string_view bytes) { return events.Feed(bytes); });
    switch (outcome.kind) {
      case provider::HttpOutcome::Kind::kCancelled:
        return;  // the client gave up on this request already
      case provider::HttpOutcome::Kind::kHandlerStopped:
        Push(absl::ResourceExhaustedError(ServerMessage(
            name_, absl::StrCat("sent an event stream the client refused: ",
                                outcome.handler_error.message()))));
        return;
      case provider::HttpOutcome::Kind::kNetworkError:
        Push(absl::UnavailableError(ServerMessage(
            name_,
            absl::StrCat("could not be reached at ", options_.url,
                         " through the proxy: ", outcome.network_error))));
        return;
      case provider::HttpOutcome::Kind::kCompleted:
        break;
    }
    if (outcome.streamed_bytes > 0) {
      events.Finish();
      if (id != nullptr && !answered && !cancel->cancelled()) {
        PushHttpError(*id, outcome.status_code,
                      "the event stream ended without the answer");
      }
      return;
    }
    const std::string& body = outcome.error_body;
    if (body.size() > kMaxMessageBytes) {
      Push(absl::ResourceExhaustedError(ServerMessage(
          name_, absl::StrCat("sent an answer over the limit of ",
                              kMaxMessageBytes, " bytes (thrown away)"))));
      return;
    }
    const bool json =
        absl::StartsWithIgnoreCase(outcome.content_type, "application/json");
    if (json && !body.empty()) {
      absl::StatusOr<Value> message = ParseServerMessage(name_, body);
      // An HTTP error whose body is a JSON-RPC error: that error (the
      // 2026-07-28 transport answers an unsupported version with a 400).
      if (message.ok() && (outcome.status_code / 100 == 2 ||
                           provider::Member(*message, "error") != nullptr)) {
        deliver(std::move(message));
        return;
      }
      if (!message.ok() && outcome.status_code / 100 == 2) {
        deliver(std::move(message));
        return;
      }
    }
    if (outcome.status_code / 100 == 2) return;  // 202 for a notification
    if (id != nullptr) {
      PushHttpError(*id, outcome.status_code, VisibleText(body, kErrorQuote));
    }
  }

  // Joins the threads of POSTs that have ended.
  void Reap() {
    std::list<Post> ended;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto post = posts_.begin(); post != posts_.end();) {
        if (post->done->load()) {
          ended.splice(ended.end(), posts_, post++);
        } else {
          ++post;
        }
      }
    }
    for (Post& post : ended) post.thread.join();
  }

  const HttpOptions options_;
  const std::string name_;
  std::atomic<bool> closing_{false};
  std::mutex mu_;
  std::condition_variable arrived_;
  std::deque<absl::StatusOr<Value>> inbox_;
  std::string version_;
  std::string session_id_;
  std::map<std::string, std::shared_ptr<CancelFlag>> aborts_;
  std::map<std::string, std::vector<HeaderParam>> header_params_;
  std::list<Post> posts_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Transport>> HttpTransport(
    HttpOptions options, std::string server_name) {
  if (!absl::StartsWith(options.url, "https://") &&
      !absl::StartsWith(options.url, "http://")) {
    return absl::InvalidArgumentError(ServerMessage(
        server_name, absl::StrCat("url \"", options.url,
                                  "\" is neither https:// nor http://")));
  }
  if (options.proxy_host_port.empty() && !options.proxy_unix_address.empty()) {
    // Only the name libcurl gives the proxy it reaches over the Unix socket.
    options.proxy_host_port = "127.0.0.1:3128";
  }
  if (options.proxy_host_port.empty()) {
    return absl::FailedPreconditionError(ServerMessage(
        server_name,
        "a remote server is reached only through the session's proxy, and "
        "there is none (no allowedDomains?)"));
  }
  for (const auto& [header, value] : options.headers) {
    if (header.empty() || !SafeHeaderText(header) || !SafeHeaderText(value) ||
        header.find(':') != std::string::npos) {
      return absl::InvalidArgumentError(ServerMessage(
          server_name, absl::StrCat("header \"", header,
                                    "\" has a name or value that cannot be "
                                    "sent (empty, ':', or a line break)")));
    }
  }
  provider::InitializeHttp();
  return std::make_unique<Http>(std::move(options), std::move(server_name));
}

}  // namespace mcp
}  // namespace garuda
