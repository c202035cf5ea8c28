// The agent's side of the code tools: what the model's find_references,
// callers and impact ask (CodeService), and its client over the channel to
// `garuda-agent tool serve` (proto/code_tools_service.proto), the process
// that parses the project's sources in its own lockdown.
#ifndef GARUDA_LIB_KNOWLEDGE_CODE_TOOLS_CLIENT_H_
#define GARUDA_LIB_KNOWLEDGE_CODE_TOOLS_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/ipc/helper_process.h"
#include "lib/knowledge/query.h"
#include "proto/code_tools_service.pb.h"

namespace garuda::knowledge {

class CodeService {
 public:
  virtual ~CodeService() = default;
  // "java", "python": the languages the project has; the code tools are
  // offered to the model only when this is not empty.
  virtual const std::vector<std::string>& languages() const = 0;
  // An error only when the question could not be asked (the server is gone,
  // the query is malformed); everything about the code is in the result.
  virtual absl::StatusOr<QueryResult> Ask(const code_tools::Query& query) = 0;
};

struct CodeToolsHelperOptions {
  // garuda-agent itself (/proc/self/exe): it serves with `tool serve`.
  std::string program;
  std::string project;
  // Forwarded as --accept-weaker-lockdown when not empty.
  std::string accept_weaker_lockdown;
};

class CodeToolsHelper : public CodeService {
 public:
  // Starts the server (it must be started before the agent locks down: the
  // agent's seccomp role has no execve) and asks it what the project has.
  static absl::StatusOr<std::unique_ptr<CodeToolsHelper>> Start(
      const CodeToolsHelperOptions& options);

  const std::vector<std::string>& languages() const override {
    return languages_;
  }
  absl::StatusOr<QueryResult> Ask(const code_tools::Query& query) override;
  // The server's lockdown, one line.
  const std::string& lockdown() const { return lockdown_; }
  ipc::HelperProcess& process() { return *process_; }
  // Closes the channel and waits for the server to exit.
  absl::Status Stop();

 private:
  absl::StatusOr<code_tools::CodeToolsReply> Call(
      code_tools::CodeToolsRequest request);

  std::unique_ptr<ipc::HelperProcess> process_;
  uint64_t seq_ = 0;
  std::vector<std::string> languages_;
  std::string lockdown_;
};

}  // namespace garuda::knowledge

#endif  // GARUDA_LIB_KNOWLEDGE_CODE_TOOLS_CLIENT_H_
