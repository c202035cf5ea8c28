#include "lib/mcp/wire.h"

#include <set>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "lib/acp/json_rpc.h"
#include "lib/base/json_message.h"
#include "lib/base/json_syntax.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"
#include "lib/provider/json.h"

namespace garuda {
namespace mcp {
namespace {

// How much of a bad line an error quotes, and of a server's error message.
constexpr size_t kQuoteBytes = 120;
constexpr size_t kErrorMessageBytes = 2000;
// A tool's description; longer ones are cut (the model reads them all).
constexpr size_t kDescriptionBytes = 8 << 10;
// A tool's schemas: JSON larger than this is not a schema a model needs.
constexpr size_t kSchemaBytes = 256 << 10;

bool ToolNameCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' || c == '/';
}

bool IsId(const Value& id) {
  return id.kind_case() == Value::kStringValue ||
         id.kind_case() == Value::kNumberValue;
}

std::string StringOr(const Value& object, absl::string_view key) {
  return provider::StringMember(object, key);
}

// Base64 text's decoded size.
size_t DecodedSize(absl::string_view base64) {
  while (!base64.empty() && base64.back() == '=') base64.remove_suffix(1);
  return base64.size() * 3 / 4;
}

absl::Status CheckObjectSchema(const Value& schema, absl::string_view which) {
  if (schema.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(
        which, " is ", JsonKindName(schema), ", not a JSON Schema object"));
  }
  const Value* type = provider::Member(schema, "type");
  if (type != nullptr && (type->kind_case() != Value::kStringValue ||
                          type->string_value() != "object")) {
    return absl::InvalidArgumentError(
        absl::StrCat(which, " has a \"type\" other than \"object\""));
  }
  const Value* properties = provider::Member(schema, "properties");
  if (properties != nullptr && properties->kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(
        absl::StrCat(which, "'s \"properties\" is ", JsonKindName(*properties),
                     ", not an object"));
  }
  const Value* required = provider::Member(schema, "required");
  if (required != nullptr) {
    if (required->kind_case() != Value::kListValue) {
      return absl::InvalidArgumentError(
          absl::StrCat(which, "'s \"required\" is not a list"));
    }
    for (const Value& name : required->list_value().values()) {
      if (name.kind_case() != Value::kStringValue) {
        return absl::InvalidArgumentError(
            absl::StrCat(which, "'s \"required\" holds ", JsonKindName(name),
                         ", not only names"));
      }
    }
  }
  if (JsonSize(schema) > kSchemaBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        which, " is larger than ", kSchemaBytes, " bytes of JSON"));
  }
  return absl::OkStatus();
}

// RFC 9110's tchar.
bool TokenCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') ||
         absl::string_view("!#$%&'*+-.^_`|~").find(c) !=
             absl::string_view::npos;
}

absl::Status WalkHeaderParams(const Value& schema,
                              std::vector<std::string>& path, bool reachable,
                              std::set<std::string>& seen,
                              std::vector<HeaderParam>& found) {
  if (schema.kind_case() == Value::kListValue) {
    for (const Value& item : schema.list_value().values()) {
      RETURN_IF_ERROR(WalkHeaderParams(item, path, false, seen, found));
    }
    return absl::OkStatus();
  }
  if (schema.kind_case() != Value::kStructValue) return absl::OkStatus();
  for (const auto& [key, value] : schema.struct_value().fields()) {
    if (key == "x-mcp-header") {
      if (!reachable || path.empty()) {
        return absl::InvalidArgumentError(
            "an x-mcp-header not reached through \"properties\" alone");
      }
      if (value.kind_case() != Value::kStringValue ||
          value.string_value().empty()) {
        return absl::InvalidArgumentError("an empty x-mcp-header");
      }
      for (char c : value.string_value()) {
        if (!TokenCharacter(c)) {
          return absl::InvalidArgumentError(
              absl::StrCat("x-mcp-header \"", MakeVisible(value.string_value()),
                           "\" is not an HTTP header name"));
        }
      }
      const std::string type = provider::StringMember(schema, "type");
      if (type != "string" && type != "integer" && type != "boolean") {
        return absl::InvalidArgumentError(absl::StrCat(
            "x-mcp-header \"", value.string_value(),
            "\" is on a parameter that is not a string, integer or boolean"));
      }
      if (!seen.insert(absl::AsciiStrToLower(value.string_value())).second) {
        return absl::InvalidArgumentError(absl::StrCat(
            "x-mcp-header \"", value.string_value(), "\" is used twice"));
      }
      found.push_back(HeaderParam{path, value.string_value()});
    } else if (key == "properties" && reachable &&
               value.kind_case() == Value::kStructValue) {
      for (const auto& [name, property] : value.struct_value().fields()) {
        path.push_back(name);
        RETURN_IF_ERROR(WalkHeaderParams(property, path, true, seen, found));
        path.pop_back();
      }
    } else {
      // Anywhere else (items, oneOf, $defs, ...): an annotation there is
      // invalid, so the walk goes on to find it.
      RETURN_IF_ERROR(WalkHeaderParams(value, path, false, seen, found));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<HeaderParam>> ReadHeaderParams(
    const Value& input_schema) {
  std::vector<std::string> path;
  std::set<std::string> seen;
  std::vector<HeaderParam> found;
  RETURN_IF_ERROR(WalkHeaderParams(input_schema, path, true, seen, found));
  return found;
}

bool BoolMember(const Value& object, absl::string_view key, bool otherwise) {
  const Value* field = provider::Member(object, key);
  if (field == nullptr || field->kind_case() != Value::kBoolValue) {
    return otherwise;
  }
  return field->bool_value();
}

std::string ServerMessage(absl::string_view server, absl::string_view what) {
  return MakeMessageVisible(absl::StrCat("mcp server '", server, "': ", what));
}

absl::StatusOr<Value> ParseServerMessage(absl::string_view server,
                                         absl::string_view text) {
  absl::Status syntax = CheckJsonObjectSyntax(text);
  absl::StatusOr<Value> value =
      syntax.ok() ? provider::ParseJson(text, "a message") : syntax;
  if (!value.ok()) {
    bool cut = false;
    std::string quote = VisibleText(text, kQuoteBytes, &cut);
    return absl::DataLossError(ServerMessage(
        server, absl::StrCat("wrote what is not a JSON-RPC message to its ",
                             "stdout (", value.status().message(), "): \"",
                             quote, cut ? "...\"" : "\"")));
  }
  return value;
}

absl::StatusOr<RpcMessage> ReadRpcMessage(const Value& value) {
  if (value.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError("a message that is not a JSON object");
  }
  if (provider::StringMember(value, "jsonrpc") != "2.0") {
    return absl::InvalidArgumentError("a message without \"jsonrpc\": \"2.0\"");
  }
  RpcMessage message;
  const Value* id = provider::Member(value, "id");
  // JSON-RPC answers a request whose id it could not read with an error of
  // id null: kept as a response that matches no request.
  if (id != nullptr && id->kind_case() == Value::kNullValue &&
      provider::Member(value, "error") != nullptr &&
      provider::Member(value, "method") == nullptr) {
    id = nullptr;
    message.id = acp::Null();
    message.kind = RpcMessage::Kind::kResponse;
  }
  if (id != nullptr && !IsId(*id)) {
    return absl::InvalidArgumentError(
        "a message whose \"id\" is neither a string nor a number");
  }
  if (id != nullptr) message.id = *id;
  if (const Value* params = provider::Member(value, "params")) {
    if (params->kind_case() != Value::kStructValue) {
      return absl::InvalidArgumentError(
          "a message whose \"params\" is not an object");
    }
    message.params = *params;
  } else {
    message.params.set_null_value(google::protobuf::NULL_VALUE);
  }
  if (const Value* method = provider::Member(value, "method")) {
    if (method->kind_case() != Value::kStringValue) {
      return absl::InvalidArgumentError(
          "a message whose \"method\" is not a string");
    }
    message.method = method->string_value();
    message.kind = id != nullptr ? RpcMessage::Kind::kRequest
                                 : RpcMessage::Kind::kNotification;
    return message;
  }
  const Value* result = provider::Member(value, "result");
  const Value* error = provider::Member(value, "error");
  const bool null_id = message.id.kind_case() == Value::kNullValue;
  if ((id == nullptr && !null_id) ||
      (result == nullptr) == (error == nullptr)) {
    return absl::InvalidArgumentError(
        "a message that is neither a request, a notification nor a response");
  }
  message.kind = RpcMessage::Kind::kResponse;
  if (result != nullptr) {
    message.result = *result;
    return message;
  }
  const Value* code = provider::Member(*error, "code");
  if (code == nullptr || code->kind_case() != Value::kNumberValue) {
    return absl::InvalidArgumentError(
        "an error response without a numeric \"code\"");
  }
  message.has_error = true;
  message.error_code = static_cast<int>(code->number_value());
  message.error_message = VisibleText(provider::StringMember(*error, "message"),
                                      kErrorMessageBytes);
  if (const Value* data = provider::Member(*error, "data")) {
    message.error_data = *data;
  }
  return message;
}

std::string VisibleText(absl::string_view text, size_t max_bytes, bool* cut) {
  if (cut != nullptr) *cut = false;
  if (max_bytes > 0 && text.size() > max_bytes) {
    size_t end = max_bytes;
    // Back to the start of a UTF-8 character.
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
      --end;
    }
    text = text.substr(0, end);
    if (cut != nullptr) *cut = true;
  }
  return MakeTextVisible(text);
}

absl::StatusOr<Tool> ReadTool(const Value& value) {
  if (value.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a tool that is ", JsonKindName(value), ", not an object"));
  }
  Tool tool;
  const Value* name = provider::Member(value, "name");
  if (name == nullptr || name->kind_case() != Value::kStringValue) {
    return absl::InvalidArgumentError("a tool without a \"name\" string");
  }
  tool.name = name->string_value();
  if (tool.name.empty() || tool.name.size() > 128) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a tool name of ", tool.name.size(), " characters (1 to 128 allowed)"));
  }
  for (char c : tool.name) {
    if (!ToolNameCharacter(c)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tool \"", MakeVisible(tool.name),
          "\": its name has characters outside A-Z a-z 0-9 _ - . /"));
    }
  }
  const Value* input = provider::Member(value, "inputSchema");
  if (input == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("tool \"", tool.name, "\" has no inputSchema"));
  }
  if (absl::Status checked = CheckObjectSchema(*input, "its inputSchema");
      !checked.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tool \"", tool.name, "\": ", checked.message()));
  }
  if (absl::StatusOr<std::vector<HeaderParam>> headers =
          ReadHeaderParams(*input);
      !headers.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tool \"", tool.name, "\": ", headers.status().message()));
  }
  tool.input_schema = *input;
  if (const Value* output = provider::Member(value, "outputSchema")) {
    if (absl::Status checked = CheckObjectSchema(*output, "its outputSchema");
        !checked.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("tool \"", tool.name, "\": ", checked.message()));
    }
    tool.output_schema = *output;
  }
  tool.title = VisibleText(StringOr(value, "title"), 200);
  tool.description =
      VisibleText(StringOr(value, "description"), kDescriptionBytes);
  if (const Value* hints = provider::ObjectMember(value, "annotations")) {
    tool.read_only_hint = BoolMember(*hints, "readOnlyHint", false);
    tool.destructive_hint = BoolMember(*hints, "destructiveHint", true);
    tool.idempotent_hint = BoolMember(*hints, "idempotentHint", false);
    tool.open_world_hint = BoolMember(*hints, "openWorldHint", true);
    if (tool.title.empty())
      tool.title = VisibleText(StringOr(*hints, "title"), 200);
  }
  return tool;
}

std::string RenderContent(const Value& block) {
  if (block.kind_case() != Value::kStructValue) {
    return absl::StrCat("[content that is ", JsonKindName(block),
                        ", not a block, left out]");
  }
  const std::string type = StringOr(block, "type");
  if (type == "text") return StringOr(block, "text");
  if (type == "image" || type == "audio") {
    return absl::StrCat("[", type, ": ", StringOr(block, "mimeType"), ", ",
                        DecodedSize(StringOr(block, "data")), " bytes]");
  }
  if (type == "resource_link") {
    std::string name = StringOr(block, "name");
    return absl::StrCat("[resource link: ", StringOr(block, "uri"),
                        name.empty() ? "" : absl::StrCat(" (", name, ")"), "]");
  }
  if (type == "resource") {
    const Value* resource = provider::ObjectMember(block, "resource");
    if (resource == nullptr) return "[resource without contents]";
    if (provider::HasStringMember(*resource, "text")) {
      return absl::StrCat("[resource: ", StringOr(*resource, "uri"), "]\n",
                          StringOr(*resource, "text"));
    }
    return absl::StrCat("[resource: ", StringOr(*resource, "uri"), ", ",
                        StringOr(*resource, "mimeType"), ", ",
                        DecodedSize(StringOr(*resource, "blob")), " bytes]");
  }
  return absl::StrCat("[content of type \"", type, "\" left out]");
}

size_t JsonSize(const Value& value) { return provider::ToJson(value).size(); }

}  // namespace mcp
}  // namespace garuda
