#include "lib/knowledge/tool_command.h"

#include <stdlib.h>

#include <istream>
#include <memory>
#include <ostream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "lib/base/status_macros.h"
#include "lib/knowledge/index.h"
#include "lib/knowledge/lsp.h"
#include "lib/knowledge/query.h"
#include "lib/knowledge/render.h"

namespace garuda::knowledge {

const char kToolUsage[] =
    "garuda-agent tool: code questions for the model's tools, also usable "
    "from a shell (the session itself: garuda-agent --help):\n"
    "\n"
    "  garuda-agent tool find_references|callers|impact --project ROOT\n"
    "      --path REL --line L --column C | --symbol NAME [--depth N] [--json]\n"
    "      [--nolsp]\n"
    "  garuda-agent tool find_references|callers|impact --project ROOT "
    "--batch -\n"
    "\n"
    "Answers code questions about the Java and Python sources under ROOT "
    "(1-based line, 1-based byte column). Every result has a provenance "
    "(precise, syntactic, search_based) and the result says `approximate` "
    "when any result is not precise. --batch - reads JSON lines "
    "{\"id\",\"path\",\"line\",\"column\"} and writes JSON lines "
    "{\"id\",\"approximate\",\"results\":[...]} from one index.\n";

namespace {

// One batch line: {"id": any, "path": string, "line": n, "column": n}.
absl::Status ParseBatchLine(const std::string& line, int number,
                            std::string* id_json, QueryPosition* position) {
  google::protobuf::Struct object;
  auto status = google::protobuf::util::JsonStringToMessage(line, &object);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch line ", number, ": not a JSON object: ", status.ToString()));
  }
  const auto& fields = object.fields();
  for (const auto& [name, value] : fields) {
    if (name != "id" && name != "path" && name != "line" && name != "column") {
      return absl::InvalidArgumentError(
          absl::StrCat("batch line ", number, ": unknown field `", name, "`"));
    }
  }
  auto id = fields.find("id");
  if (id == fields.end()) {
    *id_json = "null";
  } else if (id->second.has_number_value()) {
    double n = id->second.number_value();
    *id_json = n == static_cast<int64_t>(n)
                   ? absl::StrCat(static_cast<int64_t>(n))
                   : absl::StrCat(n);
  } else {
    *id_json = JsonString(id->second.string_value());
  }
  auto path = fields.find("path");
  auto line_field = fields.find("line");
  auto column = fields.find("column");
  if (path == fields.end() || !path->second.has_string_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch line ", number, ": `path` must be a string"));
  }
  if (line_field == fields.end() || !line_field->second.has_number_value() ||
      column == fields.end() || !column->second.has_number_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "batch line ", number, ": `line` and `column` must be numbers"));
  }
  position->path = path->second.string_value();
  position->line = static_cast<int>(line_field->second.number_value());
  position->column = static_cast<int>(column->second.number_value());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LspConfig> ToolLspConfig(const ToolCommandOptions& options) {
  if (!options.use_lsp || options.operation != "find_references") {
    return LspConfig();
  }
  return LoadLspConfig(options.settings_given
                           ? options.settings
                           : DefaultSettingsLocations(options.project));
}

absl::Status RunToolCommand(const ToolCommandOptions& options, std::istream& in,
                            std::ostream& out) {
  RETURN_IF_ERROR(ValidateOperation(options.operation));
  if (!options.unknown_receivers.empty() &&
      options.unknown_receivers != "all" &&
      options.unknown_receivers != "unique" &&
      options.unknown_receivers != "none") {
    return absl::InvalidArgumentError(
        absl::StrCat("--unknown_receivers must be all, unique or none, not `",
                     options.unknown_receivers, "`"));
  }
  if (options.project.empty()) {
    return absl::InvalidArgumentError("--project is required");
  }
  if (!options.batch) {
    if (options.symbol.empty() &&
        (options.path.empty() || options.line < 1 || options.column < 1)) {
      return absl::InvalidArgumentError(
          "--path, --line and --column (1-based) are required, or --symbol "
          "NAME, or --batch -");
    }
  }
  LspConfig lsp;
  if (options.lsp) {
    lsp = *options.lsp;
  } else {
    ASSIGN_OR_RETURN(lsp, ToolLspConfig(options));
  }
  if (!options.use_lsp || options.operation != "find_references") lsp = {};
  ASSIGN_OR_RETURN(std::unique_ptr<Index> index, BuildIndex(options.project));
  Answerer answerer(options.project, std::move(lsp));
  CodeQuestion question;
  question.operation = options.operation;
  question.depth = options.depth;
  question.max_results = options.max_results;
  question.unknown_receivers = options.unknown_receivers;
  if (!options.batch) {
    question.position = {options.path, options.line, options.column};
    question.symbol = options.symbol;
    QueryResult result = answerer.Answer(*index, question);
    out << (options.json ? ResultJson(result) + "\n" : ModelText(result));
    out.flush();
    return absl::OkStatus();
  }
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string id_json;
    QueryPosition position;
    RETURN_IF_ERROR(ParseBatchLine(line, number, &id_json, &position));
    question.position = position;
    out << BatchLineJson(id_json, answerer.Answer(*index, question)) << "\n";
    out.flush();
  }
  return absl::OkStatus();
}

}  // namespace garuda::knowledge
