// The tool table: one row per tool the model may call. A row says
// everything the session, the permissions, an editor (ACP), the terminal,
// the audit log and the JSON report need of a tool: its name, its schema,
// its kind, what a permission rule matches of a call, how a call and its
// result are shown, and its handler. Built-in tools are registered when a
// session starts (lib/agent/builtin_rows.h); MCP tools are rows added at
// run time. Dispatch is a lookup here; an unknown name is an error for the
// model (docs/tools.md).
#ifndef GARUDA_LIB_TOOLS_TOOL_TABLE_H_
#define GARUDA_LIB_TOOLS_TOOL_TABLE_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "lib/permissions/permissions.h"
#include "lib/tools/project.h"
#include "proto/agent_report.pb.h"
#include "proto/provider.pb.h"

namespace garuda {

// The session's call in progress (lib/agent/tool_run.h). lib/tools only
// passes it to a row's handler.
namespace agent {
class ToolRun;
}  // namespace agent

// Strict (spec T7): the bash tool has no outside_sandbox parameter, so the
// model never sees it, and a call that still sends it fails the check.
enum class ToolProfile { kDefault, kStrict };

// What a tool does, as ACP's ToolKind and the display group it.
enum class ToolKind { kRead, kEdit, kExecute, kSearch, kThink, kOther };

// ACP's name of the kind: "read", "edit", "execute", "search", "think",
// "other".
const char* ToolKindName(ToolKind kind);

// Which argument of a call a permission rule is matched on.
enum class TargetArgument {
  kNone,     // none: no rule speaks of the tool (task)
  kCommand,  // "command", as written
  // "path", where the kernel arrives (a link inside the project is matched
  // as its target); the file must exist.
  kReadPath,
  // "path", normalized; it may not exist yet.
  kWritePath,
  // The code tools: "path" as kReadPath, or without it the "symbol" as
  // written.
  kReadPathOrSymbol,
};

// What decides a call: the rule name (lib/permissions/rules.h kRuleNames,
// or a name no rule may use, so that only the session's default applies)
// and the argument the rule's pattern is matched on.
struct PermissionTarget {
  std::string rule;
  TargetArgument argument = TargetArgument::kNone;
  // An MCP tool's server rule (lib/permissions PermissionRequest).
  std::string server_rule;
};

// What the person sees under a finished call.
enum class ResultShown {
  kOutcomeLine,  // one line ("412 characters", "Edited src/a.c")
  kOutputTail,   // the line and the last lines of a command's output
};

struct ToolSpec {
  std::string name;
  std::string description;
  // The JSON schema (an object) the model sees, for the profile.
  std::function<std::string(ToolProfile)> schema;
  // A field the strict profile's schema leaves out, and what the model is
  // told when it sends it anyway (bash's outside_sandbox). May be empty.
  std::string strict_removed_field;
  std::string strict_removed_message;
  ToolKind kind = ToolKind::kOther;
  PermissionTarget permission;
  // The person's line for a call, from its parsed arguments (an object);
  // nullopt when they lack what the line needs ("tool: <argument>" then).
  std::function<std::optional<std::string>(const google::protobuf::Value&)>
      summary;
  // An editor's title for a call (ACP); null or nullopt: the name, and
  // the "path" when there is one.
  std::function<std::optional<std::string>(const google::protobuf::Value&)>
      title;
  ResultShown result = ResultShown::kOutcomeLine;
};

// One call's outcome: the result the model receives and the report.
struct ToolCallDone {
  provider::ToolResult result;
  agent::ToolCallReport report;
};

// Runs one call whose input passed its check. An error status only when
// the session cannot go on; everything the model can act on is a result.
using ToolHandler =
    std::function<absl::StatusOr<ToolCallDone>(agent::ToolRun&)>;

struct ToolRow {
  ToolSpec spec;
  ToolHandler handler;
  // The calls of one answer run together, after the answer's other calls,
  // instead of through `handler` (task: child agents in parallel).
  bool batched = false;
  // Offered in a request only while this is true; null: always.
  std::function<bool()> offered;
};

class ToolTable {
 public:
  // ALREADY_EXISTS when the name is taken; INVALID_ARGUMENT when the name
  // is empty or the schema is not a JSON object with "properties".
  absl::Status Register(ToolRow row);

  // The row of the same name, replaced (an MCP server that listed its tool
  // again with another description). NOT_FOUND when there is none;
  // INVALID_ARGUMENT as Register for a bad schema, the old row kept.
  absl::Status Replace(ToolRow row);

  // The row of `name`, or null.
  const ToolRow* Find(absl::string_view name) const;
  // NOT_FOUND for the model: "there is no tool named ..." with the names.
  absl::Status Unknown(absl::string_view name) const;

  // The rows offered now, as the model request lists them.
  std::vector<provider::ToolDefinition> Definitions(ToolProfile profile) const;

  // The schema of one tool (a JSON object), or NOT_FOUND.
  absl::StatusOr<google::protobuf::Value> Schema(absl::string_view tool,
                                                 ToolProfile profile) const;

  // Parses `arguments_json` and checks it against the tool's schema: a JSON
  // object, every required field present, no field the schema does not
  // list (additionalProperties is false for every tool), each of the
  // declared type (an integer is a whole number). INVALID_ARGUMENT messages
  // start with the tool's name and name the field, for the model to correct
  // its call.
  absl::StatusOr<google::protobuf::Value> CheckInput(
      absl::string_view tool, absl::string_view arguments_json,
      ToolProfile profile) const;

  // The request lib/permissions decides on, from the row's target: the
  // command; for a read path where the kernel arrives; for a write path
  // the normalized path. An input that fails its check, or a path outside
  // the project, is an error for the model (no question is asked).
  absl::StatusOr<PermissionRequest> PermissionRequestFor(
      const Project& project, absl::string_view tool,
      absl::string_view arguments_json, ToolProfile profile) const;

  // "grep \"TODO\" in src (*.c)", "bash: make test". Arguments that do not
  // parse, or a row without a line for them: "tool: " and the start of
  // `fallback` (the permission argument) or of the JSON.
  std::string Summary(absl::string_view tool, absl::string_view arguments_json,
                      absl::string_view fallback) const;

  // ACP's kind name; "other" for a name not in the table.
  const char* KindName(absl::string_view tool) const;

  const std::vector<ToolRow>& rows() const { return rows_; }

 private:
  std::vector<ToolRow> rows_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_TOOLS_TOOL_TABLE_H_
