#include "lib/tools/definitions.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"
#include "lib/provider/json.h"

namespace garuda {
namespace {

using google::protobuf::Value;
using provider::Member;
using provider::ParseJson;
using provider::ToJson;

struct ToolText {
  const char* name;
  const char* description;
  const char* schema;
  // find_references, callers, impact: offered for Java and Python projects.
  bool code = false;
};

// The code tools take a position or a declaration's name ("%p" in their
// schemas).
constexpr char kCodeToolProperties[] =
    R"("path": {"type": "string", "description": "The Java or Python file that holds the name, relative to the project root (with line and column)."},
  "line": {"type": "integer", "minimum": 1, "description": "The line of the name (1 is the first line)."},
  "column": {"type": "integer", "minimum": 1, "description": "The column of any character of the name (1 is the first byte of the line)."},
  "symbol": {"type": "string", "description": "Instead of path, line and column: the name of a class, function, method, field or constant, qualified as far as needed to be unambiguous (Cart.add, shop.cart.Cart.add)."})";

constexpr char kOutsideSandboxProperty[] =
    R"("outside_sandbox": {"type": "boolean", "description": "Run on the host, outside the OS sandbox. Always asks the user first unless a rule allows it; never staged. Use only when the sandbox prevents a command that must run."})";

constexpr ToolText kTools[] = {
    {"bash",
     "Run a shell command (bash -c) in the project folder and return its "
     "output and exit status. Commands run in the OS sandbox.",
     R"({"type": "object", "properties": {
  "command": {"type": "string", "description": "The command line."},
  "timeout": {"type": "integer", "minimum": 1, "description": "Seconds before the command is stopped."}%s
}, "required": ["command"], "additionalProperties": false})"},
    {"read_file", "Read a text file of the project, with line numbers.",
     R"({"type": "object", "properties": {
  "path": {"type": "string", "description": "The file, relative to the project root."},
  "offset": {"type": "integer", "minimum": 1, "description": "The first line to read (1 is the first line)."},
  "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read (default 2000)."}
}, "required": ["path"], "additionalProperties": false})"},
    {"list_files",
     "List the files beneath a folder of the project, one per line, without "
     "files that git ignores.",
     R"({"type": "object", "properties": {
  "path": {"type": "string", "description": "The folder, relative to the project root (default: the root)."},
  "glob": {"type": "string", "description": "Only paths matching this glob: * and ? within a name, ** any folders; a glob without / matches the file name at any depth."}
}, "additionalProperties": false})"},
    {"grep",
     "Search the project's files for lines matching an extended regular "
     "expression (POSIX ERE); prints path:line: text. Skips files that git "
     "ignores and binary files.",
     R"({"type": "object", "properties": {
  "pattern": {"type": "string", "description": "The regular expression."},
  "path": {"type": "string", "description": "A file or folder to search (default: the project root)."},
  "glob": {"type": "string", "description": "Only files matching this glob (as for list_files)."}
}, "required": ["pattern"], "additionalProperties": false})"},
    {"edit_file",
     "Replace text in a file. old_string must match the file's text exactly "
     "(whitespace included) and only once, unless replace_all is true. The "
     "user sees the diff and may be asked first.",
     R"({"type": "object", "properties": {
  "path": {"type": "string", "description": "The file, relative to the project root."},
  "old_string": {"type": "string", "description": "The exact text to replace."},
  "new_string": {"type": "string", "description": "The text to put in its place."},
  "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."}
}, "required": ["path", "old_string", "new_string"], "additionalProperties": false})"},
    {"write_file",
     "Create a file, or replace a file's whole content. The user sees the "
     "diff and may be asked first.",
     R"({"type": "object", "properties": {
  "path": {"type": "string", "description": "The file, relative to the project root."},
  "content": {"type": "string", "description": "The complete new content."}
}, "required": ["path", "content"], "additionalProperties": false})"},
    {"find_references",
     "Find the references to a class, function, method, field or constant "
     "in the project's Java and Python files: path:line:column, how each was "
     "found (precise: a language server; syntactic: our index resolved it; "
     "search_based: a name match only) and the line. A result found without "
     "a compiler starts with a warning: check it before relying on it.",
     R"({"type": "object", "properties": {
  %p
}, "additionalProperties": false})",
     true},
    {"callers",
     "The functions and methods that call or use a symbol in the project's "
     "Java and Python files, one per caller, with where the call is. As "
     "find_references, a warning first when the result is approximate.",
     R"({"type": "object", "properties": {
  %p
}, "additionalProperties": false})",
     true},
    {"impact",
     "What a change to a symbol may affect: its callers, their callers, to "
     "a depth, with a risk label that is a heuristic (a count of affected "
     "functions), not an analysis. Java and Python files.",
     R"({"type": "object", "properties": {
  %p,
  "depth": {"type": "integer", "minimum": 1, "description": "Levels of callers (default 2, at most 10)."}
}, "additionalProperties": false})",
     true},
};


const ToolText* FindTool(absl::string_view name) {
  for (const ToolText& tool : kTools) {
    if (name == tool.name) return &tool;
  }
  return nullptr;
}

std::string SchemaText(const ToolText& tool, ToolProfile profile) {
  std::string schema = tool.schema;
  size_t at = schema.find("%s");
  if (at != std::string::npos) {
    schema.replace(at, 2,
                   profile == ToolProfile::kStrict
                       ? ""
                       : absl::StrCat(",\n  ", kOutsideSandboxProperty));
  }
  at = schema.find("%p");
  if (at != std::string::npos) schema.replace(at, 2, kCodeToolProperties);
  return schema;
}

absl::Status CheckType(absl::string_view tool, absl::string_view field,
                       const Value& property, const Value& value) {
  std::string type = provider::StringMember(property, "type");
  auto wrong = [&](absl::string_view wanted) {
    return absl::InvalidArgumentError(
        absl::StrCat(tool, ": field \"", field, "\" must be ", wanted, ", not ",
                     JsonKindName(value)));
  };
  if (type == "string") {
    if (value.kind_case() != Value::kStringValue) return wrong("a string");
  } else if (type == "boolean") {
    if (value.kind_case() != Value::kBoolValue) return wrong("true or false");
  } else if (type == "integer") {
    if (value.kind_case() != Value::kNumberValue ||
        std::floor(value.number_value()) != value.number_value() ||
        std::fabs(value.number_value()) > 9.0e15) {
      return wrong("a whole number");
    }
    const Value* minimum = Member(property, "minimum");
    if (minimum != nullptr && value.number_value() < minimum->number_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          tool, ": field \"", field, "\" must be at least ",
          minimum->number_value(), ", not ", value.number_value()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Value> ToolSchema(absl::string_view tool, ToolProfile profile) {
  const ToolText* text = FindTool(tool);
  if (text == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("there is no tool named \"", tool, "\" (the tools are ",
                     absl::StrJoin(kToolNames, ", "), ", and for Java and "
                     "Python projects ", absl::StrJoin(kCodeToolNames, ", "),
                     ")"));
  }
  absl::StatusOr<Value> schema =
      ParseJson(SchemaText(*text, profile), "a tool schema");
  if (!schema.ok()) {  // compiled-in text: a programmer's error
    return absl::InternalError(
        absl::StrCat("the schema of ", tool, ": ", schema.status().message()));
  }
  return schema;
}

std::vector<provider::ToolDefinition> ToolDefinitions(ToolProfile profile,
                                                      bool code_tools) {
  std::vector<provider::ToolDefinition> definitions;
  for (const ToolText& tool : kTools) {
    if (tool.code && !code_tools) continue;
    provider::ToolDefinition definition;
    definition.set_name(tool.name);
    definition.set_description(tool.description);
    definition.set_parameters_json(ToJson(*ToolSchema(tool.name, profile)));
    definitions.push_back(std::move(definition));
  }
  return definitions;
}

absl::StatusOr<Value> CheckToolInput(absl::string_view tool,
                                     absl::string_view arguments_json,
                                     ToolProfile profile) {
  ASSIGN_OR_RETURN(Value schema, ToolSchema(tool, profile));
  absl::StatusOr<Value> input = ParseJson(
      arguments_json.empty() ? "{}" : arguments_json, "the arguments");
  if (!input.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        tool,
        ": the arguments are not valid JSON: ", input.status().message()));
  }
  if (input->kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(
        absl::StrCat(tool, ": the arguments must be a JSON object, not ",
                     JsonKindName(*input)));
  }
  const Value& properties = *Member(schema, "properties");
  std::vector<std::string> known;
  for (const auto& [name, unused] : properties.struct_value().fields()) {
    known.push_back(name);
  }
  std::sort(known.begin(), known.end());
  for (const auto& [name, value] : input->struct_value().fields()) {
    const Value* property = Member(properties, name);
    if (property == nullptr) {
      if (tool == "bash" && name == "outside_sandbox" &&
          profile == ToolProfile::kStrict) {
        return absl::InvalidArgumentError(
            "bash: unknown field \"outside_sandbox\": the strict profile runs "
            "every command in the OS sandbox, and this parameter does not "
            "exist; run the command without it");
      }
      return absl::InvalidArgumentError(
          absl::StrCat(tool, ": unknown field \"", name, "\" (the fields are ",
                       absl::StrJoin(known, ", "), ")"));
    }
    RETURN_IF_ERROR(CheckType(tool, name, *property, value));
  }
  if (const auto* required = provider::ListMember(schema, "required")) {
    for (const Value& name : required->values()) {
      if (Member(*input, name.string_value()) == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            tool, ": missing required field \"", name.string_value(), "\""));
      }
    }
  }
  return input;
}

namespace {

std::string String(const Value& input, absl::string_view name) {
  return provider::StringMember(input, name);
}
bool Bool(const Value& input, absl::string_view name) {
  const Value* value = Member(input, name);
  return value != nullptr && value->bool_value();
}
std::optional<int64_t> Integer(const Value& input, absl::string_view name) {
  const Value* value = Member(input, name);
  if (value == nullptr) return std::nullopt;
  return static_cast<int64_t>(value->number_value());
}

}  // namespace

absl::StatusOr<BashInput> ParseBashInput(absl::string_view json,
                                         ToolProfile profile) {
  ASSIGN_OR_RETURN(Value input, CheckToolInput("bash", json, profile));
  BashInput out;
  out.command = String(input, "command");
  out.timeout_seconds = Integer(input, "timeout");
  out.outside_sandbox = Bool(input, "outside_sandbox");
  return out;
}

absl::StatusOr<ReadFileInput> ParseReadFileInput(absl::string_view json) {
  ASSIGN_OR_RETURN(Value input,
                   CheckToolInput("read_file", json, ToolProfile::kDefault));
  ReadFileInput out;
  out.path = String(input, "path");
  out.offset = Integer(input, "offset").value_or(1);
  out.limit = Integer(input, "limit").value_or(2000);
  return out;
}

absl::StatusOr<ListFilesInput> ParseListFilesInput(absl::string_view json) {
  ASSIGN_OR_RETURN(Value input,
                   CheckToolInput("list_files", json, ToolProfile::kDefault));
  return ListFilesInput{String(input, "path"), String(input, "glob")};
}

absl::StatusOr<GrepInput> ParseGrepInput(absl::string_view json) {
  ASSIGN_OR_RETURN(Value input,
                   CheckToolInput("grep", json, ToolProfile::kDefault));
  return GrepInput{String(input, "pattern"), String(input, "path"),
                   String(input, "glob")};
}

absl::StatusOr<EditFileInput> ParseEditFileInput(absl::string_view json) {
  ASSIGN_OR_RETURN(Value input,
                   CheckToolInput("edit_file", json, ToolProfile::kDefault));
  return EditFileInput{String(input, "path"), String(input, "old_string"),
                       String(input, "new_string"), Bool(input, "replace_all")};
}

absl::StatusOr<WriteFileInput> ParseWriteFileInput(absl::string_view json) {
  ASSIGN_OR_RETURN(Value input,
                   CheckToolInput("write_file", json, ToolProfile::kDefault));
  return WriteFileInput{String(input, "path"), String(input, "content")};
}

}  // namespace garuda
