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
    "      --path REL --line L --column C [--depth N] [--json] [--nolsp]\n"
    "  garuda-agent tool find_references|callers|impact --project ROOT "
    "--batch -\n"
    "\n"
    "Answers code questions about the Java and Python sources under ROOT "
    "(1-based line, 1-based byte column). Every result has a provenance "
    "(precise, syntactic, search_based) and the result says `approximate` "
    "when any result is not precise. --batch - reads JSON lines "
    "{\"id\",\"path\",\"line\",\"column\"} and writes JSON lines "
    "{\"id\",\"approximate\",\"results\":[...]} from one index.\n";

absl::StatusOr<LspConfig> LoadLspConfig(const SettingsLocations& locations) {
  ASSIGN_OR_RETURN(SettingsSources sources, LoadSettingsSources(locations));
  LspConfig config;
  bool timeout_set = false;
  // Highest first: a language named in a policy wins.
  for (const Settings* settings :
       {&sources.managed_policy, &sources.user_policy,
        &sources.user_settings}) {
    for (const auto& [language, command] : settings->knowledge().lsp()) {
      config.commands.emplace(language, command);
    }
    if (settings->knowledge().lsp_timeout_ms() > 0 && !timeout_set) {
      config.timeout_ms =
          static_cast<int>(settings->knowledge().lsp_timeout_ms());
      timeout_set = true;
    }
  }
  return config;
}

namespace {

std::string LanguageOfPath(const std::string& path) {
  if (absl::EndsWith(path, ".java")) return "java";
  if (absl::EndsWith(path, ".py") || absl::EndsWith(path, ".pyi"))
    return "python";
  return "";
}

// Files opened in a language server before the first question; a larger
// project relies on the server's own scan.
constexpr size_t kOpenedFiles = 300;

class Answerer {
 public:
  Answerer(const ToolCommandOptions& options, const Index& index, LspConfig lsp)
      : options_(options), index_(index), lsp_(std::move(lsp)) {}

  QueryResult Answer(const QueryPosition& position) {
    QueryOptions query;
    query.max_results = options_.max_results;
    query.impact_depth = options_.depth;
    if (options_.unknown_receivers == "all") {
      query.unknown_receivers = UnknownReceivers::kAll;
    } else if (options_.unknown_receivers == "none") {
      query.unknown_receivers = UnknownReceivers::kNone;
    } else if (options_.unknown_receivers == "unique") {
      query.unknown_receivers = UnknownReceivers::kUnique;
    } else {
      query.unknown_receivers = DefaultUnknownReceivers(position.path);
    }
    if (options_.operation == "callers")
      return Callers(index_, position, query);
    if (options_.operation == "impact") return Impact(index_, position, query);
    QueryResult experts = FindReferences(index_, position, query);
    std::string language = LanguageOfPath(position.path);
    auto command = lsp_.commands.find(language);
    if (!options_.use_lsp || command == lsp_.commands.end()) return experts;
    std::string failure;
    LspSession* session = Session(language, command->second, &failure);
    if (session != nullptr) {
      absl::StatusOr<std::vector<Hit>> hits = session->References(position);
      if (hits.ok()) {
        QueryResult precise;
        precise.operation = experts.operation;
        precise.symbol = experts.symbol;
        precise.approximate = false;
        precise.results = *std::move(hits);
        precise.notes.push_back(
            absl::StrCat("from the language server `", command->second, "`"));
        Finish(precise, options_.max_results);
        return precise;
      }
      failure = std::string(hits.status().message());
      failed_[language] = failure;
      sessions_.erase(language);
    }
    experts.notes.push_back(
        absl::StrCat("the language server failed (", failure,
                     "); the identifier experts answered instead"));
    experts.approximate = true;
    return experts;
  }

 private:
  LspSession* Session(const std::string& language, const std::string& command,
                      std::string* failure) {
    auto failed = failed_.find(language);
    if (failed != failed_.end()) {
      *failure = failed->second;
      return nullptr;
    }
    auto it = sessions_.find(language);
    if (it != sessions_.end()) return it->second.get();
    LspOptions lsp;
    lsp.command = command;
    char resolved[PATH_MAX];
    lsp.root = realpath(options_.project.c_str(), resolved) != nullptr
                   ? resolved
                   : options_.project;
    lsp.language_id = language;
    lsp.timeout_ms = lsp_.timeout_ms;
    absl::StatusOr<std::unique_ptr<LspSession>> session =
        LspSession::Start(lsp);
    if (!session.ok()) {
      *failure = std::string(session.status().message());
      failed_[language] = *failure;
      return nullptr;
    }
    std::vector<std::string> paths;
    for (const SourceFile& file : index_.files) {
      if (LanguageOfPath(file.path) == language &&
          paths.size() < kOpenedFiles) {
        paths.push_back(file.path);
      }
    }
    absl::Status opened = (*session)->OpenDocuments(paths);
    if (!opened.ok()) {
      *failure = std::string(opened.message());
      failed_[language] = *failure;
      return nullptr;
    }
    LspSession* raw = session->get();
    sessions_[language] = *std::move(session);
    return raw;
  }

  const ToolCommandOptions& options_;
  const Index& index_;
  LspConfig lsp_;
  std::map<std::string, std::unique_ptr<LspSession>> sessions_;
  std::map<std::string, std::string> failed_;
};

absl::Status ValidateOperation(const std::string& operation) {
  if (operation == "find_references" || operation == "callers" ||
      operation == "impact") {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown tool `", operation,
                   "`: use find_references, callers or impact"));
}

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
    if (options.path.empty() || options.line < 1 || options.column < 1) {
      return absl::InvalidArgumentError(
          "--path, --line and --column (1-based) are required, or --batch -");
    }
  }
  LspConfig lsp;
  if (options.use_lsp && options.operation == "find_references") {
    SettingsLocations locations =
        options.settings_given ? options.settings
                               : DefaultSettingsLocations(options.project);
    ASSIGN_OR_RETURN(lsp, LoadLspConfig(locations));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Index> index, BuildIndex(options.project));
  Answerer answerer(options, *index, std::move(lsp));
  if (!options.batch) {
    QueryPosition position{options.path, options.line, options.column};
    QueryResult result = answerer.Answer(position);
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
    out << BatchLineJson(id_json, answerer.Answer(position)) << "\n";
    out.flush();
  }
  return absl::OkStatus();
}

}  // namespace garuda::knowledge
