// JSON-RPC 2.0 as the Agent Client Protocol carries it: one message per
// line (newline-delimited JSON, no embedded newline), over an editor's pipe
// to `garuda-agent acp` and over the socketpair between that front and a
// session's worker. A line is capped before it is parsed; a line over the
// cap, bytes that are not JSON and a message that is not JSON-RPC 2.0 are
// each reported as a JSON-RPC error, and reading goes on with the next line.
#ifndef GARUDA_LIB_ACP_JSON_RPC_H_
#define GARUDA_LIB_ACP_JSON_RPC_H_

#include <cstddef>
#include <deque>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"

namespace garuda {
namespace acp {

using google::protobuf::Value;

// One message's line, both directions. An editor's prompt with embedded
// files stays far below it; a worker's tool output is cut at 16 KiB.
inline constexpr size_t kMaxLineBytes = 4 << 20;
// Between the front and a worker, which re-serialize what they pass on (and
// may escape more than the editor did): a larger cap, still a cap.
inline constexpr size_t kMaxRelayLineBytes = 4 * kMaxLineBytes;

// The error codes of JSON-RPC 2.0 (and ACP's resource-not-found).
enum RpcCode : int {
  kParseError = -32700,
  kInvalidRequest = -32600,
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
  kResourceNotFound = -32002,
};

// Splits what a descriptor delivers into lines, each at most `max_line`
// bytes. A longer line is thrown away up to its newline, never held in
// memory, and handed out once as `too_long`.
class LineReader {
 public:
  explicit LineReader(int fd, size_t max_line = kMaxLineBytes)
      : fd_(fd), max_line_(max_line) {}

  struct Line {
    std::string text;
    bool too_long = false;
    size_t bytes = 0;  // the line's length (also when too long)
  };
  // A whole line already read, without reading.
  std::optional<Line> Next();
  // One read(2) (EINTR retried). false at the end of input; a partial last
  // line without its newline is then handed out by Next().
  absl::StatusOr<bool> Fill();
  // Next(), reading as much as it takes; nullopt at the end of input.
  absl::StatusOr<std::optional<Line>> ReadLine();
  bool ended() const { return ended_; }

 private:
  // The line being read ends: into `lines_`.
  void EndLine();

  int fd_;
  size_t max_line_;
  std::deque<Line> lines_;  // whole lines not yet handed out
  std::string current_;     // the line being read
  size_t current_bytes_ = 0;
  bool too_long_ = false;  // the line being read is over the cap
  bool ended_ = false;
};

struct RpcError {
  int code = kInternalError;
  std::string message;
};

struct Message {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kNotification;
  Value id;  // requests and responses; null otherwise
  std::string method;
  Value params;  // null when absent
  // Responses: one of these.
  Value result;
  std::optional<RpcError> error;
};

// A line parsed, or the error to answer it with and the id to answer to
// (null when none could be read).
struct Parsed {
  std::optional<Message> message;
  RpcError error;
  Value id;
};
Parsed ParseMessage(absl::string_view line);

// Compact JSON of `value`, one line. Only our own Values (never NaN or
// infinity) reach it.
std::string JsonLine(const Value& value);

std::string RequestLine(const Value& id, absl::string_view method,
                        const Value& params);
std::string NotificationLine(absl::string_view method, const Value& params);
std::string ResultLine(const Value& id, const Value& result);
std::string ErrorLine(const Value& id, const RpcError& error);

// Building and reading Values.
Value Null();
Value Str(absl::string_view text);
Value Num(double number);
Value Bool(bool flag);
Value Object();
Value List();
// `object` must be an object; returns it for chaining.
Value& Set(Value& object, absl::string_view key, Value value);
Value& Append(Value& list, Value value);
// The field, or nullptr when `object` is not an object or lacks it.
const Value* Field(const Value& object, absl::string_view key);
// The field as a string; nullopt when absent or not a string.
std::optional<std::string> StringField(const Value& object,
                                       absl::string_view key);
// Two ids (strings or numbers) as one text, for maps: "s:abc", "n:7".
std::string IdKey(const Value& id);

}  // namespace acp
}  // namespace garuda

#endif  // GARUDA_LIB_ACP_JSON_RPC_H_
