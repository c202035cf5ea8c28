// What lib/mcp's client and transports share: messages that name the
// server, the reading of one JSON-RPC message, and the checks and rendering
// of what a server returns (tools, content blocks). Internal to lib/mcp.
#ifndef GARUDA_LIB_MCP_WIRE_H_
#define GARUDA_LIB_MCP_WIRE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "lib/mcp/client.h"

namespace garuda {
namespace mcp {

// "mcp server 'NAME': WHAT", made visible (WHAT may quote the server).
std::string ServerMessage(absl::string_view server, absl::string_view what);

// One message's text: a JSON object, else DATA_LOSS naming the server and
// quoting the start of what it sent (visible).
absl::StatusOr<Value> ParseServerMessage(absl::string_view server,
                                         absl::string_view text);

// A JSON-RPC 2.0 message from a server, checked.
struct RpcMessage {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kNotification;
  Value id;  // requests and responses
  std::string method;
  Value params;  // an object, or null when absent
  Value result;  // responses without error
  bool has_error = false;
  int error_code = 0;
  std::string error_message;  // visible, capped
  Value error_data;
};
// INVALID_ARGUMENT (what is wrong, without the server's name) when `value`
// is not a JSON-RPC 2.0 request, notification or response.
absl::StatusOr<RpcMessage> ReadRpcMessage(const Value& value);

// Text from a server as it may reach a terminal or a model: invalid UTF-8
// and control characters (but newline and tab) shown as marks, cut at
// `max_bytes` (0: no cut) on a character boundary; `cut` tells.
std::string VisibleText(absl::string_view text, size_t max_bytes = 0,
                        bool* cut = nullptr);

// A tool from tools/list, checked: a name of 1 to 128 characters from
// [A-Za-z0-9_./-], an input schema that is an object schema, an output
// schema (if any) that is an object. INVALID_ARGUMENT says what is wrong.
absl::StatusOr<Tool> ReadTool(const Value& tool);

// A tool argument that the 2026-07-28 Streamable HTTP transport mirrors into
// a header, "Mcp-Param-<name>" (its inputSchema's "x-mcp-header").
struct HeaderParam {
  std::vector<std::string> path;  // the chain of "properties" keys
  std::string name;
};
// The annotations of `input_schema`; INVALID_ARGUMENT when one breaks the
// rules (empty, not a token, twice in any case, on a type other than
// string, integer or boolean, or reached other than through "properties"):
// such a tool is not offered.
absl::StatusOr<std::vector<HeaderParam>> ReadHeaderParams(
    const Value& input_schema);

// Content blocks (tools/call, prompts/get) rendered as text.
std::string RenderContent(const Value& block);

// object[key] when it is true or false, else `otherwise`.
bool BoolMember(const Value& object, absl::string_view key, bool otherwise);

// Compact JSON size of a value (for caps).
size_t JsonSize(const Value& value);

}  // namespace mcp
}  // namespace garuda

#endif  // GARUDA_LIB_MCP_WIRE_H_
