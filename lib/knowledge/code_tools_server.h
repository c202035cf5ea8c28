// `garuda-agent tool serve`: the model's code tools answered over a channel
// (proto/code_tools_service.proto) from an index of the project that is
// rebuilt when a source file changed, with the configured language servers.
// The caller locks the process down first (LockDownCodeTools): everything
// this file does after that parses what the project's files say.
#ifndef GARUDA_LIB_KNOWLEDGE_CODE_TOOLS_SERVER_H_
#define GARUDA_LIB_KNOWLEDGE_CODE_TOOLS_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/ipc/channel.h"
#include "lib/knowledge/answerer.h"
#include "lib/knowledge/index.h"

namespace garuda::knowledge {

// The project's index, built again only when the list of source files or a
// file's size or modification time changed since the last build.
class IndexCache {
 public:
  explicit IndexCache(std::string project) : project_(std::move(project)) {}
  // The current index; `rebuilt` says whether it was built for this call.
  absl::StatusOr<const Index*> Current(bool* rebuilt = nullptr);

 private:
  std::string project_;
  std::vector<std::string> signature_;
  std::unique_ptr<Index> index_;
};

struct CodeToolsServerOptions {
  std::string project;
  LspConfig lsp;
  // One line about the process's lockdown, for Describe.
  std::string lockdown;
};

// Serves until the agent closes the channel (OK) or breaks the protocol.
absl::Status ServeCodeTools(ipc::Channel& channel,
                            const CodeToolsServerOptions& options);

}  // namespace garuda::knowledge

#endif  // GARUDA_LIB_KNOWLEDGE_CODE_TOOLS_SERVER_H_
