#include "lib/knowledge/answerer.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"

namespace garuda::knowledge {

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

absl::Status ValidateOperation(const std::string& operation) {
  if (operation == "find_references" || operation == "callers" ||
      operation == "impact") {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown tool `", operation,
                   "`: use find_references, callers or impact"));
}

std::string LanguageOfPath(const std::string& path) {
  if (absl::EndsWith(path, ".java")) return "java";
  if (absl::EndsWith(path, ".py") || absl::EndsWith(path, ".pyi"))
    return "python";
  return "";
}

namespace {

// Files opened in a language server before the first question; a larger
// project relies on the server's own scan.
constexpr size_t kOpenedFiles = 300;

QueryOptions OptionsFor(const CodeQuestion& question,
                        const QueryPosition& position) {
  QueryOptions query;
  query.max_results = question.max_results;
  query.impact_depth = question.depth;
  if (question.unknown_receivers == "all") {
    query.unknown_receivers = UnknownReceivers::kAll;
  } else if (question.unknown_receivers == "none") {
    query.unknown_receivers = UnknownReceivers::kNone;
  } else if (question.unknown_receivers == "unique") {
    query.unknown_receivers = UnknownReceivers::kUnique;
  } else {
    query.unknown_receivers = DefaultUnknownReceivers(position.path);
  }
  return query;
}

}  // namespace

QueryResult Answerer::Answer(const Index& index, const CodeQuestion& question) {
  QueryPosition position = question.position;
  if (!question.symbol.empty()) {
    absl::StatusOr<QueryPosition> found =
        PositionOfSymbol(index, question.symbol);
    if (!found.ok()) {
      // Unresolved: an empty answer, approximate like every empty one.
      QueryResult empty;
      empty.operation = question.operation;
      empty.symbol = question.symbol;
      empty.approximate = true;
      empty.notes.push_back(std::string(found.status().message()));
      if (question.operation == "impact") empty.risk = "unknown (heuristic)";
      return empty;
    }
    position = *found;
  }
  QueryOptions query = OptionsFor(question, position);
  QueryResult answer;
  if (question.operation == "callers") {
    answer = Callers(index, position, query);
  } else if (question.operation == "impact") {
    answer = Impact(index, position, query);
  } else {
    answer = FindReferences(index, position, query);
    std::string language = LanguageOfPath(position.path);
    auto command = lsp_.commands.find(language);
    if (command != lsp_.commands.end()) {
      std::string failure;
      LspSession* session = Session(index, language, command->second, &failure);
      if (session != nullptr) {
        absl::StatusOr<std::vector<Hit>> hits = session->References(position);
        if (hits.ok()) {
          QueryResult precise;
          precise.operation = answer.operation;
          precise.symbol = answer.symbol;
          precise.approximate = false;
          precise.results = *std::move(hits);
          precise.notes.push_back(
              absl::StrCat("from the language server `", command->second, "`"));
          Finish(precise, question.max_results);
          answer = std::move(precise);
          AddContext(index, answer);
          return answer;
        }
        failure = std::string(hits.status().message());
        failed_[language] = failure;
        sessions_.erase(language);
      }
      answer.notes.push_back(
          absl::StrCat("the language server failed (", failure,
                       "); the syntactic index answered instead"));
      answer.approximate = true;
    }
  }
  AddContext(index, answer);
  return answer;
}

LspSession* Answerer::Session(const Index& index, const std::string& language,
                              const std::string& command,
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
  // The server is told the real folder (its own paths come back resolved);
  // a folder that cannot be resolved is passed as given.
  lsp.root = RealPath(project_, "project folder").value_or(project_);
  lsp.language_id = language;
  lsp.timeout_ms = lsp_.timeout_ms;
  absl::StatusOr<std::unique_ptr<LspSession>> session = LspSession::Start(lsp);
  if (!session.ok()) {
    *failure = std::string(session.status().message());
    failed_[language] = *failure;
    return nullptr;
  }
  std::vector<std::string> paths;
  for (const SourceFile& file : index.files) {
    if (LanguageOfPath(file.path) == language && paths.size() < kOpenedFiles) {
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

}  // namespace garuda::knowledge
