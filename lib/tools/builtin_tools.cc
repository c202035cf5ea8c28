#include "lib/tools/builtin_tools.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/provider/json.h"
#include "lib/question/question.h"
#include "lib/tools/definitions.h"

namespace garuda {
namespace {

using google::protobuf::Value;
using provider::Member;

// The code tools take a position or a declaration's name ("%p" in their
// schemas).
constexpr char kCodeToolProperties[] =
    R"("path": {"type": "string", "description": "The Java or Python file that holds the name, relative to the project root (with line and column)."},
  "line": {"type": "integer", "minimum": 1, "description": "The line of the name (1 is the first line)."},
  "column": {"type": "integer", "minimum": 1, "description": "The column of any character of the name (1 is the first byte of the line)."},
  "symbol": {"type": "string", "description": "Instead of path, line and column: the name of a class, function, method, field or constant, qualified as far as needed to be unambiguous (Cart.add, shop.cart.Cart.add)."})";

constexpr char kOutsideSandboxProperty[] =
    R"("outside_sandbox": {"type": "boolean", "description": "Run on the host, outside the OS sandbox. Always asks the user first unless a rule allows it; never staged. Use only when the sandbox prevents a command that must run."})";

// The line a call is shown with quotes each argument up to this many
// characters (not cutting a UTF-8 sequence), as the staged question's title
// says a command (lib/question).
constexpr size_t kArgumentChars = 200;

std::string Short(absl::string_view text) {
  return OneLineText(text, kArgumentChars);
}

std::string Str(const Value& args, absl::string_view name) {
  return provider::StringMember(args, name);
}

bool True(const Value& args, absl::string_view name) {
  const Value* member = Member(args, name);
  return member != nullptr && member->has_bool_value() && member->bool_value();
}

std::optional<int64_t> WholeNumber(const Value& object,
                                   absl::string_view name) {
  const Value* member = Member(object, name);
  if (member == nullptr || !member->has_number_value()) return std::nullopt;
  double number = member->number_value();
  if (number != std::floor(number) || number < 0 || number > 1e15) {
    return std::nullopt;
  }
  return static_cast<int64_t>(number);
}

std::optional<int64_t> Integer(const Value& input, absl::string_view name) {
  const Value* value = Member(input, name);
  if (value == nullptr) return std::nullopt;
  return static_cast<int64_t>(value->number_value());
}

std::string Folder(const Value& args) {
  std::string path = Str(args, "path");
  return path.empty() || path == "." ? "the project root" : Short(path);
}

std::function<std::string(ToolProfile)> Fixed(std::string schema) {
  return [schema = std::move(schema)](ToolProfile) { return schema; };
}

ToolSpec Spec(std::string name, std::string description,
              std::function<std::string(ToolProfile)> schema, ToolKind kind,
              PermissionTarget permission) {
  ToolSpec spec;
  spec.name = std::move(name);
  spec.description = std::move(description);
  spec.schema = std::move(schema);
  spec.kind = kind;
  spec.permission = std::move(permission);
  return spec;
}

ToolSpec BashSpec() {
  ToolSpec spec = Spec(
      kCommandRule,
      "Run a shell command (bash -c) in the project folder and return its "
      "output and exit status. Commands run in the OS sandbox.",
      [](ToolProfile profile) {
        std::string schema =
            R"({"type": "object", "properties": {
  "command": {"type": "string", "description": "The command line."},
  "timeout": {"type": "integer", "minimum": 1, "description": "Seconds before the command is stopped."}%s
}, "required": ["command"], "additionalProperties": false})";
        schema.replace(schema.find("%s"), 2,
                       profile == ToolProfile::kStrict
                           ? ""
                           : absl::StrCat(",\n  ", kOutsideSandboxProperty));
        return schema;
      },
      ToolKind::kExecute, {kCommandRule, TargetArgument::kCommand});
  spec.strict_removed_field = "outside_sandbox";
  spec.strict_removed_message =
      "bash: unknown field \"outside_sandbox\": the strict profile runs "
      "every command in the OS sandbox, and this parameter does not exist; "
      "run the command without it";
  spec.summary = [](const Value& args) -> std::optional<std::string> {
    if (!provider::HasStringMember(args, "command")) return std::nullopt;
    std::string line =
        absl::StrCat(kCommandRule, ": ", Short(Str(args, "command")));
    if (True(args, "outside_sandbox")) line += " (outside the sandbox)";
    return line;
  };
  spec.title = [](const Value& args) -> std::optional<std::string> {
    if (!provider::HasStringMember(args, "command")) return std::nullopt;
    return Str(args, "command");
  };
  spec.result = ResultShown::kOutputTail;
  return spec;
}

constexpr char kReadFileDescription[] =
    "Read a text file of the project, with line numbers.";
constexpr char kReadFileSchema[] = R"({"type": "object", "properties": {
  "path": {"type": "string", "description": "The file, relative to the project root."},
  "offset": {"type": "integer", "minimum": 1, "description": "The first line to read (1 is the first line)."},
  "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read (default 2000)."}
}, "required": ["path"], "additionalProperties": false})";

constexpr char kListFilesDescription[] =
    "List the files beneath a folder of the project, one per line, without "
    "files that git ignores.";
constexpr char kListFilesSchema[] = R"({"type": "object", "properties": {
  "path": {"type": "string", "description": "The folder, relative to the project root (default: the root)."},
  "glob": {"type": "string", "description": "Only paths matching this glob: * and ? within a name, ** any folders; a glob without / matches the file name at any depth."}
}, "additionalProperties": false})";

constexpr char kGrepDescription[] =
    "Search the project's files for lines matching an extended regular "
    "expression (POSIX ERE); prints path:line: text. Skips files that git "
    "ignores and binary files.";
constexpr char kGrepSchema[] = R"({"type": "object", "properties": {
  "pattern": {"type": "string", "description": "The regular expression."},
  "path": {"type": "string", "description": "A file or folder to search (default: the project root)."},
  "glob": {"type": "string", "description": "Only files matching this glob (as for list_files)."}
}, "required": ["pattern"], "additionalProperties": false})";

constexpr char kEditFileDescription[] =
    "Replace text in a file. old_string must match the file's text exactly "
    "(whitespace included) and only once, unless replace_all is true. The "
    "user sees the diff and may be asked first.";
constexpr char kEditFileSchema[] = R"({"type": "object", "properties": {
  "path": {"type": "string", "description": "The file, relative to the project root."},
  "old_string": {"type": "string", "description": "The exact text to replace."},
  "new_string": {"type": "string", "description": "The text to put in its place."},
  "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."}
}, "required": ["path", "old_string", "new_string"], "additionalProperties": false})";

constexpr char kWriteFileDescription[] =
    "Create a file, or replace a file's whole content. The user sees the "
    "diff and may be asked first.";
constexpr char kWriteFileSchema[] = R"({"type": "object", "properties": {
  "path": {"type": "string", "description": "The file, relative to the project root."},
  "content": {"type": "string", "description": "The complete new content."}
}, "required": ["path", "content"], "additionalProperties": false})";

constexpr char kFindReferencesDescription[] =
    "Find the references to a class, function, method, field or constant "
    "in the project's Java and Python files: path:line:column, how each was "
    "found (precise: a language server; syntactic: our index resolved it; "
    "search_based: a name match only) and the line. A result found without "
    "a compiler starts with a warning: check it before relying on it.";
// find_references and callers take the symbol alone.
constexpr char kSymbolSchema[] = R"({"type": "object", "properties": {
  %p
}, "additionalProperties": false})";

constexpr char kCallersDescription[] =
    "The functions and methods that call or use a symbol in the project's "
    "Java and Python files, one per caller, with where the call is. As "
    "find_references, a warning first when the result is approximate.";
constexpr char kImpactDescription[] =
    "What a change to a symbol may affect: its callers, their callers, to "
    "a depth, with a risk label that is a heuristic (a count of affected "
    "functions), not an analysis. Java and Python files.";
constexpr char kImpactSchema[] = R"({"type": "object", "properties": {
  %p,
  "depth": {"type": "integer", "minimum": 1, "description": "Levels of callers (default 2, at most 10)."}
}, "additionalProperties": false})";

std::string CodeSchema(const char* schema) {
  std::string text = schema;
  text.replace(text.find("%p"), 2, kCodeToolProperties);
  return text;
}

// The line of a call that names a path, with what more it says.
std::optional<std::string> PathLine(absl::string_view tool, const Value& args) {
  if (!provider::HasStringMember(args, "path")) return std::nullopt;
  return absl::StrCat(tool, " ", Short(Str(args, "path")));
}

ReadToolSpec ReadFile() {
  ReadToolSpec tool;
  tool.spec = Spec(kReadFileRule, kReadFileDescription, Fixed(kReadFileSchema),
                   ToolKind::kRead, {kReadFileRule, TargetArgument::kReadPath});
  tool.spec.summary = [](const Value& args) -> std::optional<std::string> {
    std::optional<std::string> line = PathLine(kReadFileRule, args);
    if (!line) return std::nullopt;
    std::optional<int64_t> offset = WholeNumber(args, "offset");
    std::optional<int64_t> limit = WholeNumber(args, "limit");
    if (offset && limit && *limit > 0) {
      absl::StrAppend(&*line, " lines ", *offset, "-", *offset + *limit - 1);
    } else if (offset) {
      absl::StrAppend(&*line, " from line ", *offset);
    } else if (limit) {
      absl::StrAppend(&*line, " lines 1-", *limit);
    }
    return line;
  };
  tool.run = [](Project& project, const Value& input, const HiddenPredicate&) {
    return ReadFileTool(project, ReadFileInputOf(input));
  };
  return tool;
}

ReadToolSpec ListFiles() {
  ReadToolSpec tool;
  tool.spec =
      Spec(kListFilesRule, kListFilesDescription, Fixed(kListFilesSchema),
           ToolKind::kSearch, {kListFilesRule, TargetArgument::kReadPath});
  tool.spec.summary = [](const Value& args) -> std::optional<std::string> {
    std::string line = absl::StrCat(kListFilesRule, " ", Folder(args));
    if (!Str(args, "glob").empty()) {
      absl::StrAppend(&line, " matching ", Short(Str(args, "glob")));
    }
    return line;
  };
  tool.run = [](Project& project, const Value& input,
                const HiddenPredicate& hidden) {
    return ListFilesTool(project, ListFilesInputOf(input), hidden);
  };
  return tool;
}

ReadToolSpec Grep() {
  ReadToolSpec tool;
  tool.spec = Spec(kGrepRule, kGrepDescription, Fixed(kGrepSchema),
                   ToolKind::kSearch, {kGrepRule, TargetArgument::kReadPath});
  tool.spec.summary = [](const Value& args) -> std::optional<std::string> {
    if (!provider::HasStringMember(args, "pattern")) return std::nullopt;
    std::string line = absl::StrCat(
        kGrepRule, " \"", Short(Str(args, "pattern")), "\" in ", Folder(args));
    if (!Str(args, "glob").empty()) {
      absl::StrAppend(&line, " (", Short(Str(args, "glob")), ")");
    }
    return line;
  };
  tool.spec.title = [](const Value& args) -> std::optional<std::string> {
    if (!provider::HasStringMember(args, "pattern")) return std::nullopt;
    return absl::StrCat(kGrepRule, " ", Str(args, "pattern"));
  };
  tool.run = [](Project& project, const Value& input,
                const HiddenPredicate& hidden) {
    return GrepTool(project, GrepInputOf(input), hidden);
  };
  return tool;
}

EditToolSpec EditFile() {
  EditToolSpec tool;
  tool.spec =
      Spec(kEditFileRule, kEditFileDescription, Fixed(kEditFileSchema),
           ToolKind::kEdit, {kEditFileRule, TargetArgument::kWritePath});
  tool.spec.summary = [](const Value& args) -> std::optional<std::string> {
    std::optional<std::string> line = PathLine(kEditFileRule, args);
    if (line && True(args, "replace_all")) *line += " (every occurrence)";
    return line;
  };
  tool.propose = [](const Project& project, const Value& input) {
    return ProposeEditFile(project, EditFileInputOf(input));
  };
  return tool;
}

EditToolSpec WriteFile() {
  EditToolSpec tool;
  tool.spec =
      Spec(kWriteFileRule, kWriteFileDescription, Fixed(kWriteFileSchema),
           ToolKind::kEdit, {kWriteFileRule, TargetArgument::kWritePath});
  tool.spec.summary = [](const Value& args) -> std::optional<std::string> {
    std::optional<std::string> line = PathLine(kWriteFileRule, args);
    if (line)
      absl::StrAppend(&*line, " (", Str(args, "content").size(), " bytes)");
    return line;
  };
  tool.propose = [](const Project& project, const Value& input) {
    return ProposeWriteFile(project, WriteFileInputOf(input));
  };
  return tool;
}

// The code tools read like read_file: no rule names them, so they are
// decided by the read default; their answers leave out files a read rule
// denies (lib/agent). Shown by their symbol or their place in a file.
ToolSpec CodeTool(const char* name, const char* description,
                  const char* schema) {
  ToolSpec spec =
      Spec(name, description, Fixed(CodeSchema(schema)), ToolKind::kSearch,
           {name, TargetArgument::kReadPathOrSymbol});
  std::string tool = name;
  spec.summary = [tool](const Value& args) -> std::optional<std::string> {
    if (!Str(args, "symbol").empty()) {
      return absl::StrCat(tool, " ", Short(Str(args, "symbol")));
    }
    if (Str(args, "path").empty()) return std::nullopt;
    std::string line = absl::StrCat(tool, " ", Short(Str(args, "path")));
    if (std::optional<int64_t> at = WholeNumber(args, "line")) {
      absl::StrAppend(&line, ":", *at);
      if (std::optional<int64_t> column = WholeNumber(args, "column")) {
        absl::StrAppend(&line, ":", *column);
      }
    }
    return line;
  };
  return spec;
}

BuiltinTools MakeBuiltins() {
  BuiltinTools tools;
  tools.command = BashSpec();
  tools.reads = {ReadFile(), ListFiles(), Grep()};
  tools.edits = {EditFile(), WriteFile()};
  tools.code = {
      CodeTool("find_references", kFindReferencesDescription, kSymbolSchema),
      CodeTool("callers", kCallersDescription, kSymbolSchema),
      CodeTool("impact", kImpactDescription, kImpactSchema),
  };
  return tools;
}

ToolTable MakeBuiltinSpecs(bool code_tools) {
  const BuiltinTools& tools = Builtins();
  std::vector<ToolSpec> specs = {tools.command};
  for (const ReadToolSpec& tool : tools.reads) specs.push_back(tool.spec);
  for (const EditToolSpec& tool : tools.edits) specs.push_back(tool.spec);
  if (code_tools) {
    for (const ToolSpec& spec : tools.code) specs.push_back(spec);
  }
  ToolTable table;
  for (ToolSpec& spec : specs) {
    absl::Status registered = table.Register({std::move(spec), nullptr});
    // Compiled-in rows: a programmer's error.
    if (!registered.ok()) {
      std::fprintf(stderr, "garuda: the built-in tools: %s\n",
                   std::string(registered.message()).c_str());
      std::abort();
    }
  }
  return table;
}

}  // namespace

const BuiltinTools& Builtins() {
  static const BuiltinTools* const tools = new BuiltinTools(MakeBuiltins());
  return *tools;
}

const ToolTable& BuiltinSpecs() {
  static const ToolTable* const table = new ToolTable(MakeBuiltinSpecs(true));
  return *table;
}

std::vector<provider::ToolDefinition> ToolDefinitions(ToolProfile profile,
                                                      bool code_tools) {
  return MakeBuiltinSpecs(code_tools).Definitions(profile);
}

absl::StatusOr<Value> ToolSchema(absl::string_view tool, ToolProfile profile) {
  return BuiltinSpecs().Schema(tool, profile);
}

absl::StatusOr<Value> CheckToolInput(absl::string_view tool,
                                     absl::string_view arguments_json,
                                     ToolProfile profile) {
  return BuiltinSpecs().CheckInput(tool, arguments_json, profile);
}

BashInput BashInputOf(const Value& input) {
  BashInput out;
  out.command = Str(input, "command");
  out.timeout_seconds = Integer(input, "timeout");
  out.outside_sandbox = True(input, "outside_sandbox");
  return out;
}

ReadFileInput ReadFileInputOf(const Value& input) {
  ReadFileInput out;
  out.path = Str(input, "path");
  out.offset = Integer(input, "offset").value_or(1);
  out.limit = Integer(input, "limit").value_or(2000);
  return out;
}

ListFilesInput ListFilesInputOf(const Value& input) {
  return ListFilesInput{Str(input, "path"), Str(input, "glob")};
}

GrepInput GrepInputOf(const Value& input) {
  return GrepInput{Str(input, "pattern"), Str(input, "path"),
                   Str(input, "glob")};
}

EditFileInput EditFileInputOf(const Value& input) {
  return EditFileInput{Str(input, "path"), Str(input, "old_string"),
                       Str(input, "new_string"), True(input, "replace_all")};
}

WriteFileInput WriteFileInputOf(const Value& input) {
  return WriteFileInput{Str(input, "path"), Str(input, "content")};
}

namespace {

// The input check of a built-in tool, then its typed fields.
template <typename Input>
absl::StatusOr<Input> Parse(const char* tool, absl::string_view json,
                            ToolProfile profile, Input (*of)(const Value&)) {
  ASSIGN_OR_RETURN(Value input, CheckToolInput(tool, json, profile));
  return of(input);
}

}  // namespace

absl::StatusOr<BashInput> ParseBashInput(absl::string_view json,
                                         ToolProfile profile) {
  return Parse(kCommandRule, json, profile, BashInputOf);
}
absl::StatusOr<ReadFileInput> ParseReadFileInput(absl::string_view json) {
  return Parse(kReadFileRule, json, ToolProfile::kDefault, ReadFileInputOf);
}
absl::StatusOr<ListFilesInput> ParseListFilesInput(absl::string_view json) {
  return Parse(kListFilesRule, json, ToolProfile::kDefault, ListFilesInputOf);
}
absl::StatusOr<GrepInput> ParseGrepInput(absl::string_view json) {
  return Parse(kGrepRule, json, ToolProfile::kDefault, GrepInputOf);
}
absl::StatusOr<EditFileInput> ParseEditFileInput(absl::string_view json) {
  return Parse(kEditFileRule, json, ToolProfile::kDefault, EditFileInputOf);
}
absl::StatusOr<WriteFileInput> ParseWriteFileInput(absl::string_view json) {
  return Parse(kWriteFileRule, json, ToolProfile::kDefault, WriteFileInputOf);
}

}  // namespace garuda
