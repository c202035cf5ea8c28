#include "lib/acp/json_rpc.h"

#include <errno.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/json_syntax.h"
#include "lib/provider/json.h"

namespace garuda {
namespace acp {

void LineReader::EndLine() {
  Line line;
  line.bytes = current_bytes_;
  line.too_long = too_long_;
  if (!too_long_) {
    line.text = std::move(current_);
    if (!line.text.empty() && line.text.back() == '\r') line.text.pop_back();
  }
  current_.clear();
  current_bytes_ = 0;
  too_long_ = false;
  // Blank lines between messages are not messages.
  const bool blank = !line.too_long &&
                     line.text.find_first_not_of(" \t\r") == std::string::npos;
  if (!blank) lines_.push_back(std::move(line));
}

std::optional<LineReader::Line> LineReader::Next() {
  if (lines_.empty()) return std::nullopt;
  Line line = std::move(lines_.front());
  lines_.pop_front();
  return line;
}

absl::StatusOr<bool> LineReader::Fill() {
  if (ended_) return false;
  char chunk[64 * 1024];
  ssize_t got;
  do {
    got = ::read(fd_, chunk, sizeof(chunk));
  } while (got < 0 && errno == EINTR);
  if (got < 0) return ErrnoStatus(errno, "read(the JSON-RPC input)");
  if (got == 0) {
    ended_ = true;
    if (current_bytes_ > 0) EndLine();  // a last line without its newline
    return false;
  }
  absl::string_view data(chunk, static_cast<size_t>(got));
  while (!data.empty()) {
    size_t newline = data.find('\n');
    size_t take = newline == absl::string_view::npos ? data.size() : newline;
    current_bytes_ += take;
    if (!too_long_ && current_bytes_ > max_line_) {
      // Over the cap: the rest of the line is counted, never kept.
      too_long_ = true;
      current_.clear();
      current_.shrink_to_fit();
    }
    if (!too_long_) current_.append(data.data(), take);
    if (newline == absl::string_view::npos) break;
    EndLine();
    data.remove_prefix(newline + 1);
  }
  return true;
}

absl::StatusOr<std::optional<LineReader::Line>> LineReader::ReadLine() {
  while (true) {
    if (std::optional<Line> line = Next()) return line;
    absl::StatusOr<bool> more = Fill();
    if (!more.ok()) return more.status();
    if (!*more && lines_.empty()) return std::optional<Line>();
  }
}

// The builders and readers are lib/provider/json.h's (one JSON helper set;
// every string made valid UTF-8, which protobuf's JSON printer needs: a
// command's output may not be), in the shapes this protocol code reads best.
Value Null() { return provider::JsonNull(); }
Value Str(absl::string_view text) { return provider::JsonString(text); }
Value Num(double number) { return provider::JsonNumber(number); }
Value Bool(bool flag) { return provider::JsonBool(flag); }
Value Object() { return provider::JsonObject(); }
Value List() { return provider::JsonList(); }

Value& Set(Value& object, absl::string_view key, Value value) {
  provider::Set(&object, key, std::move(value));
  return object;
}

Value& Append(Value& list, Value value) {
  provider::Append(&list, std::move(value));
  return list;
}

const Value* Field(const Value& object, absl::string_view key) {
  return provider::Member(object, key);
}

std::optional<std::string> StringField(const Value& object,
                                       absl::string_view key) {
  if (!provider::HasStringMember(object, key)) return std::nullopt;
  return provider::StringMember(object, key);
}

std::string IdKey(const Value& id) {
  if (id.kind_case() == Value::kStringValue) {
    return absl::StrCat("s:", id.string_value());
  }
  if (id.kind_case() == Value::kNumberValue) {
    return absl::StrCat("n:", id.number_value());
  }
  return "null";
}

std::string JsonLine(const Value& value) { return provider::ToJson(value); }

namespace {

Value Envelope() {
  Value message = Object();
  Set(message, "jsonrpc", Str("2.0"));
  return message;
}

std::string WithNewline(const Value& value) {
  return absl::StrCat(JsonLine(value), "\n");
}

bool IsId(const Value& id) {
  return id.kind_case() == Value::kStringValue ||
         id.kind_case() == Value::kNumberValue;
}

}  // namespace

std::string RequestLine(const Value& id, absl::string_view method,
                        const Value& params) {
  Value message = Envelope();
  Set(message, "id", id);
  Set(message, "method", Str(method));
  Set(message, "params", params);
  return WithNewline(message);
}

std::string NotificationLine(absl::string_view method, const Value& params) {
  Value message = Envelope();
  Set(message, "method", Str(method));
  Set(message, "params", params);
  return WithNewline(message);
}

std::string ResultLine(const Value& id, const Value& result) {
  Value message = Envelope();
  Set(message, "id", id);
  Set(message, "result", result);
  return WithNewline(message);
}

std::string ErrorLine(const Value& id, const RpcError& error) {
  Value message = Envelope();
  Set(message, "id", id);
  Value body = Object();
  Set(body, "code", Num(error.code));
  Set(body, "message", Str(error.message));
  Set(message, "error", std::move(body));
  return WithNewline(message);
}

Parsed ParseMessage(absl::string_view line) {
  Parsed parsed;
  parsed.id = Null();
  // The strict check first: it says where the text is wrong, and refuses
  // what protobuf's reader would let through (a key twice, bad UTF-8).
  if (absl::Status syntax = CheckJsonSyntax(line); !syntax.ok()) {
    parsed.error = {kParseError, absl::StrCat("not JSON: ", syntax.message())};
    return parsed;
  }
  absl::StatusOr<Value> read = provider::ParseJson(line, "the message");
  if (!read.ok()) {
    parsed.error = {kParseError, std::string(read.status().message())};
    return parsed;
  }
  const Value& value = *read;
  if (value.kind_case() != Value::kStructValue) {
    parsed.error = {kInvalidRequest,
                    "a JSON-RPC message is an object (a batch, a list, is "
                    "not used by ACP)"};
    return parsed;
  }
  const Value* id = Field(value, "id");
  if (id != nullptr && IsId(*id)) parsed.id = *id;
  if (StringField(value, "jsonrpc") != "2.0") {
    parsed.error = {kInvalidRequest, "\"jsonrpc\" must be \"2.0\""};
    return parsed;
  }
  if (id != nullptr && !IsId(*id)) {
    parsed.error = {kInvalidRequest, "\"id\" must be a string or a number"};
    return parsed;
  }
  Message message;
  if (id != nullptr)
    message.id = *id;
  else
    message.id = Null();
  const Value* params = Field(value, "params");
  message.params = params != nullptr ? *params : Null();
  const Value* method = Field(value, "method");
  if (method != nullptr) {
    if (method->kind_case() != Value::kStringValue) {
      parsed.error = {kInvalidRequest, "\"method\" must be a string"};
      return parsed;
    }
    message.method = method->string_value();
    message.kind =
        id != nullptr ? Message::Kind::kRequest : Message::Kind::kNotification;
    if (params != nullptr && params->kind_case() != Value::kStructValue &&
        params->kind_case() != Value::kListValue) {
      parsed.error = {kInvalidRequest,
                      "\"params\" must be an object or a list"};
      return parsed;
    }
    parsed.message = std::move(message);
    return parsed;
  }
  const Value* result = Field(value, "result");
  const Value* error = Field(value, "error");
  if (id == nullptr || (result == nullptr) == (error == nullptr)) {
    parsed.error = {kInvalidRequest,
                    "neither a request (\"method\") nor a response (\"id\" "
                    "and one of \"result\" or \"error\")"};
    return parsed;
  }
  message.kind = Message::Kind::kResponse;
  if (result != nullptr) {
    message.result = *result;
  } else {
    RpcError rpc;
    const Value* code = Field(*error, "code");
    rpc.code = code != nullptr && code->kind_case() == Value::kNumberValue
                   ? static_cast<int>(code->number_value())
                   : kInternalError;
    rpc.message = StringField(*error, "message").value_or("");
    message.error = std::move(rpc);
  }
  parsed.message = std::move(message);
  return parsed;
}

}  // namespace acp
}  // namespace garuda
