// A minimal Language Server Protocol client for textDocument/references:
// start the server named in the settings (`knowledge.lsp.<language>`), ask,
// and give up after the timeout. Results from a server are `precise`.
#ifndef GARUDA_LIB_KNOWLEDGE_LSP_H_
#define GARUDA_LIB_KNOWLEDGE_LSP_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"
#include "lib/knowledge/query.h"

namespace garuda::knowledge {

struct LspOptions {
  // A command line split on spaces, e.g. "pyright-langserver --stdio".
  std::string command;
  std::string root;         // absolute project root
  std::string language_id;  // "python", "java"
  int timeout_ms = 10000;
};

class LspSession {
 public:
  // Starts the server and completes the initialize handshake.
  static absl::StatusOr<std::unique_ptr<LspSession>> Start(
      const LspOptions& options);
  ~LspSession();
  LspSession(const LspSession&) = delete;
  LspSession& operator=(const LspSession&) = delete;

  // Opens documents (paths relative to the root) so that the server knows
  // them before its own scan of the workspace ends: pyright answers from
  // the files it knows when it is asked.
  absl::Status OpenDocuments(const std::vector<std::string>& paths);

  // The references at a 1-based line and byte column, the declaration
  // excluded; each hit is `precise`.
  absl::StatusOr<std::vector<Hit>> References(const QueryPosition& position);

 private:
  LspSession(LspOptions options, pid_t pid, UniqueFd to_server,
             UniqueFd from_server);
  absl::Status Send(const std::string& json);
  // Reads messages until the response with `id`; server requests get an
  // empty answer so the server does not wait on us.
  absl::StatusOr<std::string> AwaitResponse(int id);
  absl::StatusOr<std::string> ReadMessage(int64_t deadline_ms);
  absl::Status OpenDocument(const std::string& path);

  LspOptions options_;
  pid_t pid_;
  UniqueFd to_server_;
  UniqueFd from_server_;
  std::string buffer_;
  int next_id_ = 1;
  std::vector<std::string> opened_;
};

}  // namespace garuda::knowledge

#endif  // GARUDA_LIB_KNOWLEDGE_LSP_H_
