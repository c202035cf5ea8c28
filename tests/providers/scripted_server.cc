#include "tests/providers/scripted_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/base/errno_status.h"
#include "lib/provider/json.h"

namespace garuda {
namespace provider {
namespace testing {
namespace {

constexpr size_t kMaxRequestBytes = 16 << 20;

// `text` in `count` pieces, never splitting a UTF-8 sequence.
std::vector<std::string> Split(const std::string& text, uint32_t count) {
  count = std::max<uint32_t>(1, count);
  std::vector<std::string> pieces;
  size_t start = 0;
  for (uint32_t i = 1; i <= count; ++i) {
    size_t end = i == count ? text.size() : text.size() * i / count;
    while (end < text.size() &&
           (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
      ++end;
    }
    end = std::max(end, start);
    pieces.push_back(text.substr(start, end - start));
    start = end;
  }
  return pieces;
}

std::string DataEvent(const Value& data) {
  return absl::StrCat("data: ", ToJson(data), "\n\n");
}

std::string NamedEvent(const std::string& name, const Value& data) {
  return absl::StrCat("event: ", name, "\n", "data: ", ToJson(data), "\n\n");
}

std::string StopReason(ServerKind kind, const ScriptedReply& reply) {
  std::string reason = reply.stop_reason();
  if (reason.empty()) {
    reason = reply.tool_calls_size() > 0 ? "tool_use" : "end_turn";
  }
  if (kind == ServerKind::kOpenAi) {
    if (reason == "end_turn") return "stop";
    if (reason == "tool_use") return "tool_calls";
    if (reason == "max_tokens") return "length";
  }
  return reason;
}

Value ErrorObject(const ScriptedReply& reply, const char* default_type) {
  Value error = JsonObject();
  Set(&error, "type",
      JsonString(reply.error_type().empty() ? default_type
                                            : reply.error_type()));
  Set(&error, "message",
      JsonString(reply.error_message().empty() ? "scripted error"
                                               : reply.error_message()));
  return error;
}

void RenderOpenAi(const ScriptedReply& reply, RenderedReply* out) {
  auto chunk = [](Value delta, const char* finish) {
    Value data = JsonObject();
    Set(&data, "id", JsonString("chatcmpl-scripted"));
    Set(&data, "object", JsonString("chat.completion.chunk"));
    Set(&data, "model", JsonString("scripted"));
    Value* choices = Set(&data, "choices", JsonList());
    Value choice = JsonObject();
    Set(&choice, "index", JsonNumber(0));
    Set(&choice, "delta", std::move(delta));
    Set(&choice, "finish_reason",
        finish == nullptr ? JsonNull() : JsonString(finish));
    Append(choices, std::move(choice));
    return DataEvent(data);
  };
  Value role = JsonObject();
  Set(&role, "role", JsonString("assistant"));
  Set(&role, "content", JsonString(""));
  out->pieces.push_back(chunk(std::move(role), nullptr));
  bool fault_set = false;
  if (!reply.text().empty()) {
    for (const std::string& piece : Split(reply.text(), reply.text_pieces())) {
      Value delta = JsonObject();
      Set(&delta, "content", JsonString(piece));
      out->pieces.push_back(chunk(std::move(delta), nullptr));
      if (!fault_set) {
        out->fault_after = out->pieces.size();
        fault_set = true;
      }
    }
  }
  for (int i = 0; i < reply.tool_calls_size(); ++i) {
    const ScriptedToolCall& call = reply.tool_calls(i);
    Value delta = JsonObject();
    Value* calls = Set(&delta, "tool_calls", JsonList());
    Value entry = JsonObject();
    Set(&entry, "index", JsonNumber(i));
    Set(&entry, "id", JsonString(call.id()));
    Set(&entry, "type", JsonString("function"));
    Value* function = Set(&entry, "function", JsonObject());
    Set(function, "name", JsonString(call.name()));
    Set(function, "arguments", JsonString(""));
    Append(calls, std::move(entry));
    out->pieces.push_back(chunk(std::move(delta), nullptr));
    for (const std::string& piece :
         Split(call.arguments_json(), call.argument_pieces())) {
      Value more = JsonObject();
      Value* more_calls = Set(&more, "tool_calls", JsonList());
      Value part = JsonObject();
      Set(&part, "index", JsonNumber(i));
      Value* part_function = Set(&part, "function", JsonObject());
      Set(part_function, "arguments", JsonString(piece));
      Append(more_calls, std::move(part));
      out->pieces.push_back(chunk(std::move(more), nullptr));
    }
  }
  if (!fault_set) out->fault_after = out->pieces.size();
  out->pieces.push_back(
      chunk(JsonObject(), StopReason(ServerKind::kOpenAi, reply).c_str()));
  if (reply.usage() != ScriptedReply::NONE) {
    Value data = JsonObject();
    Set(&data, "id", JsonString("chatcmpl-scripted"));
    Set(&data, "choices", JsonList());
    Value* usage = Set(&data, "usage", JsonObject());
    Set(usage, "prompt_tokens", JsonNumber(reply.input_tokens()));
    if (reply.usage() == ScriptedReply::FULL) {
      Set(usage, "completion_tokens", JsonNumber(reply.output_tokens()));
      Set(usage, "total_tokens",
          JsonNumber(reply.input_tokens() + reply.output_tokens()));
    } else if (reply.usage() == ScriptedReply::INVALID) {
      Set(usage, "completion_tokens", JsonNumber(-1));
    }
    out->pieces.push_back(DataEvent(data));
  }
  out->pieces.push_back("data: [DONE]\n\n");
  if (reply.fault() == ScriptedReply::ERROR_EVENT) {
    out->pieces.resize(out->fault_after);
    Value data = JsonObject();
    Set(&data, "error", ErrorObject(reply, "server_error"));
    out->pieces.push_back(DataEvent(data));
    out->fault_after = out->pieces.size();
  }
}

void RenderAnthropic(const ScriptedReply& reply, RenderedReply* out) {
  Value start = JsonObject();
  Set(&start, "type", JsonString("message_start"));
  Value* message = Set(&start, "message", JsonObject());
  Set(message, "id", JsonString("msg_scripted"));
  Set(message, "type", JsonString("message"));
  Set(message, "role", JsonString("assistant"));
  Set(message, "model", JsonString("scripted"));
  Set(message, "content", JsonList());
  Set(message, "stop_reason", JsonNull());
  if (reply.usage() != ScriptedReply::NONE) {
    Value* usage = Set(message, "usage", JsonObject());
    Set(usage, "input_tokens", JsonNumber(reply.input_tokens()));
    Set(usage, "output_tokens", JsonNumber(1));
  }
  out->pieces.push_back(NamedEvent("message_start", start));
  Value ping = JsonObject();
  Set(&ping, "type", JsonString("ping"));
  out->pieces.push_back(NamedEvent("ping", ping));

  int index = 0;
  bool fault_set = false;
  auto block_start = [&](Value block) {
    Value data = JsonObject();
    Set(&data, "type", JsonString("content_block_start"));
    Set(&data, "index", JsonNumber(index));
    Set(&data, "content_block", std::move(block));
    out->pieces.push_back(NamedEvent("content_block_start", data));
  };
  auto block_delta = [&](Value delta) {
    Value data = JsonObject();
    Set(&data, "type", JsonString("content_block_delta"));
    Set(&data, "index", JsonNumber(index));
    Set(&data, "delta", std::move(delta));
    out->pieces.push_back(NamedEvent("content_block_delta", data));
  };
  auto block_stop = [&]() {
    Value data = JsonObject();
    Set(&data, "type", JsonString("content_block_stop"));
    Set(&data, "index", JsonNumber(index));
    out->pieces.push_back(NamedEvent("content_block_stop", data));
    ++index;
  };
  if (!reply.text().empty()) {
    Value block = JsonObject();
    Set(&block, "type", JsonString("text"));
    Set(&block, "text", JsonString(""));
    block_start(std::move(block));
    for (const std::string& piece : Split(reply.text(), reply.text_pieces())) {
      Value delta = JsonObject();
      Set(&delta, "type", JsonString("text_delta"));
      Set(&delta, "text", JsonString(piece));
      block_delta(std::move(delta));
      if (!fault_set) {
        out->fault_after = out->pieces.size();
        fault_set = true;
      }
    }
    block_stop();
  }
  for (const ScriptedToolCall& call : reply.tool_calls()) {
    Value block = JsonObject();
    Set(&block, "type", JsonString("tool_use"));
    Set(&block, "id", JsonString(call.id()));
    Set(&block, "name", JsonString(call.name()));
    Set(&block, "input", JsonObject());
    block_start(std::move(block));
    for (const std::string& piece :
         Split(call.arguments_json(), call.argument_pieces())) {
      Value delta = JsonObject();
      Set(&delta, "type", JsonString("input_json_delta"));
      Set(&delta, "partial_json", JsonString(piece));
      block_delta(std::move(delta));
    }
    block_stop();
  }
  if (!fault_set) out->fault_after = out->pieces.size();
  Value end = JsonObject();
  Set(&end, "type", JsonString("message_delta"));
  Value* delta = Set(&end, "delta", JsonObject());
  Set(delta, "stop_reason",
      JsonString(StopReason(ServerKind::kAnthropic, reply)));
  Set(delta, "stop_sequence", JsonNull());
  if (reply.usage() == ScriptedReply::FULL ||
      reply.usage() == ScriptedReply::INVALID) {
    Value* usage = Set(&end, "usage", JsonObject());
    Set(usage, "output_tokens",
        JsonNumber(reply.usage() == ScriptedReply::FULL ? reply.output_tokens()
                                                        : -1));
  }
  out->pieces.push_back(NamedEvent("message_delta", end));
  Value stop = JsonObject();
  Set(&stop, "type", JsonString("message_stop"));
  out->pieces.push_back(NamedEvent("message_stop", stop));
  if (reply.fault() == ScriptedReply::ERROR_EVENT) {
    out->pieces.resize(out->fault_after);
    Value data = JsonObject();
    Set(&data, "type", JsonString("error"));
    Set(&data, "error", ErrorObject(reply, "overloaded_error"));
    out->pieces.push_back(NamedEvent("error", data));
    out->fault_after = out->pieces.size();
  }
}

absl::Status SendAll(int fd, absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return LastErrnoStatus("send(scripted reply)");
    }
    bytes.remove_prefix(static_cast<size_t>(sent));
  }
  return absl::OkStatus();
}

std::string Chunk(absl::string_view bytes) {
  return absl::StrCat(absl::Hex(bytes.size()), "\r\n", bytes, "\r\n");
}

}  // namespace

const char* KindName(ServerKind kind) {
  return kind == ServerKind::kOpenAi ? "openai" : "anthropic";
}

absl::StatusOr<ServerKind> KindFromName(const std::string& name) {
  if (name == "openai") return ServerKind::kOpenAi;
  if (name == "anthropic") return ServerKind::kAnthropic;
  return absl::InvalidArgumentError(absl::StrCat(
      "server kind \"", name, "\": use \"openai\" or \"anthropic\""));
}

RenderedReply Render(ServerKind kind, const ScriptedReply& reply) {
  RenderedReply out;
  const uint32_t status = reply.http_status() == 0 ? 200 : reply.http_status();
  out.status = static_cast<int>(status);
  if (!reply.retry_after().empty()) {
    out.headers.push_back(absl::StrCat("Retry-After: ", reply.retry_after()));
  }
  if (status != 200) {
    Value body = JsonObject();
    if (kind == ServerKind::kAnthropic) Set(&body, "type", JsonString("error"));
    Set(&body, "error",
        ErrorObject(reply, status == 429 ? "rate_limit_error" : "api_error"));
    out.headers.push_back("Content-Type: application/json");
    out.pieces.push_back(ToJson(body));
    out.fault_after = out.pieces.size();
    return out;
  }
  out.headers.push_back("Content-Type: text/event-stream");
  out.headers.push_back("Cache-Control: no-cache");
  if (kind == ServerKind::kOpenAi) {
    RenderOpenAi(reply, &out);
  } else {
    RenderAnthropic(reply, &out);
  }
  return out;
}

absl::StatusOr<std::unique_ptr<ScriptedServer>> ScriptedServer::Start(
    ServerKind kind, ProviderScript script,
    std::function<void(const RecordedRequest&)> on_request) {
  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!listener) return LastErrnoStatus("socket(AF_INET)");
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&address),
             sizeof(address)) != 0) {
    return LastErrnoStatus("bind(127.0.0.1:0)");
  }
  if (::listen(listener.get(), 16) != 0) return LastErrnoStatus("listen");
  socklen_t length = sizeof(address);
  if (::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address),
                    &length) != 0) {
    return LastErrnoStatus("getsockname");
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return LastErrnoStatus("pipe2");
  std::unique_ptr<ScriptedServer> server(new ScriptedServer(
      kind, std::move(script), std::move(listener), UniqueFd(pipe_fds[0]),
      UniqueFd(pipe_fds[1]), ntohs(address.sin_port)));
  server->on_request_ = std::move(on_request);
  server->thread_ = std::thread([raw = server.get()] { raw->Serve(); });
  return server;
}

ScriptedServer::ScriptedServer(ServerKind kind, ProviderScript script,
                               UniqueFd listener, UniqueFd stop_read,
                               UniqueFd stop_write, int port)
    : kind_(kind),
      script_(std::move(script)),
      listener_(std::move(listener)),
      stop_read_(std::move(stop_read)),
      stop_write_(std::move(stop_write)),
      port_(port) {}

ScriptedServer::~ScriptedServer() {
  stop_write_.Reset();  // the serving thread sees the pipe close
  if (thread_.joinable()) thread_.join();
}

std::string ScriptedServer::base_url() const {
  return kind_ == ServerKind::kOpenAi
             ? absl::StrCat("http://127.0.0.1:", port_, "/v1")
             : absl::StrCat("http://127.0.0.1:", port_);
}

std::vector<RecordedRequest> ScriptedServer::requests() const {
  absl::MutexLock lock(&mutex_);
  return requests_;
}

size_t ScriptedServer::request_count() const {
  absl::MutexLock lock(&mutex_);
  return requests_.size();
}

bool ScriptedServer::WaitForHangUp(absl::Duration timeout) {
  absl::MutexLock lock(&mutex_);
  auto hung_up = [this]() ABSL_SHARED_LOCKS_REQUIRED(mutex_) {
    return hang_ups_ > 0;
  };
  return mutex_.AwaitWithTimeout(absl::Condition(&hung_up), timeout);
}

void ScriptedServer::Serve() {
  while (true) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0},
                     {stop_read_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if (fds[0].revents & POLLIN) {
      UniqueFd connection(
          ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (connection) HandleConnection(std::move(connection));
    }
  }
}

void ScriptedServer::HandleConnection(UniqueFd connection) {
  // Read the request: headers, then Content-Length bytes of body.
  std::string bytes;
  size_t header_end = std::string::npos;
  size_t body_length = 0;
  char buffer[16384];
  while (true) {
    if (header_end != std::string::npos &&
        bytes.size() >= header_end + 4 + body_length) {
      break;
    }
    pollfd fds[2] = {{connection.get(), POLLIN, 0},
                     {stop_read_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    const ssize_t got = ::recv(connection.get(), buffer, sizeof(buffer), 0);
    if (got <= 0) return;  // the client left before its request was whole
    bytes.append(buffer, static_cast<size_t>(got));
    if (bytes.size() > kMaxRequestBytes) return;
    if (header_end == std::string::npos) {
      header_end = bytes.find("\r\n\r\n");
      if (header_end == std::string::npos) continue;
      for (absl::string_view line : absl::StrSplit(
               absl::string_view(bytes).substr(0, header_end), "\r\n")) {
        const size_t colon = line.find(':');
        if (colon == absl::string_view::npos) continue;
        if (absl::AsciiStrToLower(line.substr(0, colon)) == "content-length") {
          (void)absl::SimpleAtoi(
              absl::StripAsciiWhitespace(line.substr(colon + 1)), &body_length);
        }
      }
    }
  }

  RecordedRequest request;
  std::vector<absl::string_view> lines =
      absl::StrSplit(absl::string_view(bytes).substr(0, header_end), "\r\n");
  std::vector<std::string> request_line = absl::StrSplit(lines[0], ' ');
  if (request_line.size() >= 2) {
    request.set_method(request_line[0]);
    request.set_path(request_line[1]);
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos) continue;
    (*request.mutable_headers())[absl::AsciiStrToLower(
        lines[i].substr(0, colon))] =
        std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
  }
  request.set_body(bytes.substr(header_end + 4, body_length));
  if (on_request_) on_request_(request);
  size_t recorded;
  {
    absl::MutexLock lock(&mutex_);
    requests_.push_back(request);
    recorded = requests_.size() - 1;
  }

  // What to answer: a wrong endpoint or a body that is not a streamed
  // request is a 4xx, as the real service answers; otherwise the next reply.
  const char* endpoint =
      kind_ == ServerKind::kOpenAi ? "/v1/chat/completions" : "/v1/messages";
  ScriptedReply reply;
  absl::StatusOr<Value> body = ParseJson(request.body(), "the request body");
  const Value* stream = body.ok() ? Member(*body, "stream") : nullptr;
  if (request.method() != "POST" || request.path() != endpoint) {
    reply.set_http_status(404);
    reply.set_error_type("not_found_error");
    reply.set_error_message(absl::StrCat("this server serves POST ", endpoint));
  } else if (stream == nullptr || !stream->bool_value()) {
    reply.set_http_status(400);
    reply.set_error_type("invalid_request_error");
    reply.set_error_message("the scripted server answers only stream: true");
  } else {
    int chosen = -1;
    {
      absl::MutexLock lock(&mutex_);
      used_.resize(script_.replies_size(), false);
      for (int i = 0; i < script_.replies_size() && chosen < 0; ++i) {
        if (used_[i]) continue;
        bool fits = true;
        for (const std::string& text :
             script_.replies(i).when_body_contains()) {
          fits = fits && absl::StrContains(request.body(), text);
        }
        if (fits) chosen = i;
      }
      if (chosen >= 0) used_[chosen] = true;
    }
    if (chosen < 0) {
      reply.set_http_status(500);
      reply.set_error_type("api_error");
      reply.set_error_message("the script has no reply left");
    } else {
      reply = script_.replies(chosen);
      if (reply.input_from_body()) {
        reply.set_input_tokens(
            static_cast<int64_t>((request.body().size() + 3) / 4));
      }
    }
  }
  const RenderedReply rendered = Render(kind_, reply);

  const int fd = connection.get();
  std::string head =
      absl::StrCat("HTTP/1.1 ", rendered.status, " ",
                   rendered.status == 200 ? "OK" : "Scripted", "\r\n");
  for (const std::string& header : rendered.headers) {
    absl::StrAppend(&head, header, "\r\n");
  }
  absl::StrAppend(&head, "Transfer-Encoding: chunked\r\n",
                  "Connection: close\r\n\r\n");
  if (!SendAll(fd, head).ok()) return;
  const bool faulty = reply.fault() != ScriptedReply::NO_FAULT &&
                      reply.fault() != ScriptedReply::ERROR_EVENT;
  const size_t sent_pieces =
      faulty ? rendered.fault_after : rendered.pieces.size();
  for (size_t i = 0; i < sent_pieces; ++i) {
    if (!SendAll(fd, Chunk(rendered.pieces[i])).ok()) return;
  }
  if (reply.fault() == ScriptedReply::DROP) return;  // no last chunk
  if (reply.fault() == ScriptedReply::HOLD) {
    // Nothing more until the client hangs up (or the server stops).
    if (!WaitForClientClose(fd)) return;
    absl::MutexLock lock(&mutex_);
    requests_[recorded].set_client_hung_up(true);
    ++hang_ups_;
    return;
  }
  (void)SendAll(fd, "0\r\n\r\n");
  // Let the client read everything before the close.
  ::shutdown(fd, SHUT_WR);
  WaitForClientClose(fd);
}

bool ScriptedServer::WaitForClientClose(int fd) {
  char buffer[4096];
  while (true) {
    pollfd fds[2] = {{fd, POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (fds[1].revents != 0) return false;
    if (::recv(fd, buffer, sizeof(buffer), 0) <= 0) return true;
  }
}

}  // namespace testing
}  // namespace provider
}  // namespace garuda
