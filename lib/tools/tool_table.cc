#include "lib/tools/tool_table.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"
#include "lib/provider/json.h"
#include "lib/question/question.h"

namespace garuda {
namespace {

using google::protobuf::Value;
using provider::Member;

constexpr size_t kSummaryChars = 200;

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

absl::StatusOr<Value> ParseSchema(const ToolSpec& spec, ToolProfile profile) {
  if (!spec.schema) {
    return absl::InvalidArgumentError(
        absl::StrCat("the tool ", spec.name, " has no schema"));
  }
  absl::StatusOr<Value> schema =
      provider::ParseJson(spec.schema(profile), "a tool schema");
  if (!schema.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the schema of ", spec.name, ": ", schema.status().message()));
  }
  const Value* properties = Member(*schema, "properties");
  if (schema->kind_case() != Value::kStructValue || properties == nullptr ||
      properties->kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(
        absl::StrCat("the schema of ", spec.name,
                     " must be a JSON object with an object \"properties\""));
  }
  return schema;
}

}  // namespace

const char* ToolKindName(ToolKind kind) {
  switch (kind) {
    case ToolKind::kRead:
      return "read";
    case ToolKind::kEdit:
      return "edit";
    case ToolKind::kExecute:
      return "execute";
    case ToolKind::kSearch:
      return "search";
    case ToolKind::kThink:
      return "think";
    case ToolKind::kOther:
      break;
  }
  return "other";
}

absl::Status ToolTable::Register(ToolRow row) {
  if (row.spec.name.empty()) {
    return absl::InvalidArgumentError("a tool needs a name");
  }
  if (Find(row.spec.name) != nullptr) {
    return absl::AlreadyExistsError(
        absl::StrCat("there is already a tool named \"", row.spec.name, "\""));
  }
  for (ToolProfile profile : {ToolProfile::kDefault, ToolProfile::kStrict}) {
    RETURN_IF_ERROR(ParseSchema(row.spec, profile).status());
  }
  rows_.push_back(std::move(row));
  return absl::OkStatus();
}

absl::Status ToolTable::Replace(ToolRow row) {
  for (ToolRow& existing : rows_) {
    if (existing.spec.name != row.spec.name) continue;
    for (ToolProfile profile : {ToolProfile::kDefault, ToolProfile::kStrict}) {
      RETURN_IF_ERROR(ParseSchema(row.spec, profile).status());
    }
    existing = std::move(row);
    return absl::OkStatus();
  }
  return absl::NotFoundError(absl::StrCat("there is no tool named \"",
                                          row.spec.name, "\" to replace"));
}

const ToolRow* ToolTable::Find(absl::string_view name) const {
  for (const ToolRow& row : rows_) {
    if (row.spec.name == name) return &row;
  }
  return nullptr;
}

absl::Status ToolTable::Unknown(absl::string_view name) const {
  std::vector<std::string> names;
  for (const ToolRow& row : rows_) {
    if (!row.offered || row.offered()) names.push_back(row.spec.name);
  }
  return absl::NotFoundError(absl::StrCat("there is no tool named \"", name,
                                          "\" (the tools are ",
                                          absl::StrJoin(names, ", "), ")"));
}

std::vector<provider::ToolDefinition> ToolTable::Definitions(
    ToolProfile profile) const {
  std::vector<provider::ToolDefinition> definitions;
  for (const ToolRow& row : rows_) {
    if (row.offered && !row.offered()) continue;
    provider::ToolDefinition definition;
    definition.set_name(row.spec.name);
    definition.set_description(row.spec.description);
    // Checked by Register.
    definition.set_parameters_json(
        provider::ToJson(*ParseSchema(row.spec, profile)));
    definitions.push_back(std::move(definition));
  }
  return definitions;
}

absl::StatusOr<Value> ToolTable::Schema(absl::string_view tool,
                                        ToolProfile profile) const {
  const ToolRow* row = Find(tool);
  if (row == nullptr) return Unknown(tool);
  absl::StatusOr<Value> schema = ParseSchema(row->spec, profile);
  if (!schema.ok()) return absl::InternalError(schema.status().message());
  return schema;
}

absl::StatusOr<Value> ToolTable::CheckInput(absl::string_view tool,
                                            absl::string_view arguments_json,
                                            ToolProfile profile) const {
  ASSIGN_OR_RETURN(Value schema, Schema(tool, profile));
  const ToolSpec& spec = Find(tool)->spec;
  absl::StatusOr<Value> input = provider::ParseJson(
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
      if (profile == ToolProfile::kStrict &&
          !spec.strict_removed_field.empty() &&
          name == spec.strict_removed_field) {
        return absl::InvalidArgumentError(spec.strict_removed_message);
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

absl::StatusOr<PermissionRequest> ToolTable::PermissionRequestFor(
    const Project& project, absl::string_view tool,
    absl::string_view arguments_json, ToolProfile profile) const {
  ASSIGN_OR_RETURN(Value input, CheckInput(tool, arguments_json, profile));
  const PermissionTarget& target = Find(tool)->spec.permission;
  PermissionRequest request;
  request.tool = target.rule;
  request.server_rule = target.server_rule;
  std::string path = provider::StringMember(input, "path");
  switch (target.argument) {
    case TargetArgument::kNone:
      return request;
    case TargetArgument::kCommand:
      request.argument = provider::StringMember(input, "command");
      return request;
    case TargetArgument::kWritePath: {
      ASSIGN_OR_RETURN(request.argument, project.Relative(path));
      return request;
    }
    case TargetArgument::kReadPathOrSymbol:
      // By name: the rules see the name; the files the answer comes from
      // are filtered by the read rules afterwards (RunCodeTool).
      if (path.empty()) {
        request.argument = provider::StringMember(input, "symbol");
        return request;
      }
      break;
    case TargetArgument::kReadPath:
      break;
  }
  ASSIGN_OR_RETURN(OpenedPath opened, project.OpenForRead(path));
  request.argument = opened.relative;
  return request;
}

std::string ToolTable::Summary(absl::string_view tool,
                               absl::string_view arguments_json,
                               absl::string_view fallback) const {
  const ToolRow* row = Find(tool);
  if (row != nullptr && row->spec.summary) {
    absl::StatusOr<Value> args =
        provider::ParseJson(arguments_json, "arguments");
    if (args.ok() && args->has_struct_value()) {
      if (std::optional<std::string> line = row->spec.summary(*args)) {
        return *line;
      }
    }
  }
  absl::string_view shown = fallback.empty() ? arguments_json : fallback;
  if (shown.empty()) return std::string(tool);
  return absl::StrCat(tool, ": ", OneLineText(shown, kSummaryChars));
}

const char* ToolTable::KindName(absl::string_view tool) const {
  const ToolRow* row = Find(tool);
  return ToolKindName(row == nullptr ? ToolKind::kOther : row->spec.kind);
}

}  // namespace garuda
