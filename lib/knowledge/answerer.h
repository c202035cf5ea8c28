// One code question answered from an index, or from a configured language
// server with the index as its fallback: what `garuda-agent tool` answers on
// the command line and what `garuda-agent tool serve` answers the model's
// code tools with.
#ifndef GARUDA_LIB_KNOWLEDGE_ANSWERER_H_
#define GARUDA_LIB_KNOWLEDGE_ANSWERER_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "lib/knowledge/index.h"
#include "lib/knowledge/lsp.h"
#include "lib/knowledge/query.h"
#include "lib/policy/sources.h"

namespace garuda::knowledge {

// Language -> server command and the timeout, from the settings. The
// project's own settings cannot name a program to run: a cloned
// repository would choose what runs on the user's machine. Only the
// managed policy, the user's policy and the user's settings can.
struct LspConfig {
  std::map<std::string, std::string> commands;
  int timeout_ms = 10000;
};
absl::StatusOr<LspConfig> LoadLspConfig(const SettingsLocations& locations);

struct CodeQuestion {
  std::string operation;  // find_references, callers, impact
  QueryPosition position;
  // Instead of the position: a declaration's name (PositionOfSymbol).
  std::string symbol;
  int depth = 2;  // impact
  int max_results = 500;
  // "", "all", "unique" or "none" (UnknownReceivers); "" is the language's
  // measured default.
  std::string unknown_receivers;
};

// "find_references", "callers" or "impact", else INVALID_ARGUMENT naming
// them.
absl::Status ValidateOperation(const std::string& operation);

// "java" for .java, "python" for .py and .pyi, else "".
std::string LanguageOfPath(const std::string& path);

class Answerer {
 public:
  // `project` is the root the index was built from; `lsp` may be empty.
  Answerer(std::string project, LspConfig lsp)
      : project_(std::move(project)), lsp_(std::move(lsp)) {}

  // Never fails: a symbol that does not resolve, a position that names
  // nothing, a server that fails are notes of an approximate result.
  // find_references asks the language server of the position's language
  // when one is configured (`precise`), else or when it fails the index.
  QueryResult Answer(const Index& index, const CodeQuestion& question);

  // The sources changed: servers that were given the old texts are stopped
  // (the next question starts them again with the new ones).
  void ForgetServers() { sessions_.clear(); }

 private:
  LspSession* Session(const Index& index, const std::string& language,
                      const std::string& command, std::string* failure);

  std::string project_;
  LspConfig lsp_;
  std::map<std::string, std::unique_ptr<LspSession>> sessions_;
  std::map<std::string, std::string> failed_;
};

}  // namespace garuda::knowledge

#endif  // GARUDA_LIB_KNOWLEDGE_ANSWERER_H_
