#include "lib/knowledge/code_tools_server.h"

#include <sys/stat.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/ipc/dispatcher.h"
#include "lib/knowledge/answer_proto.h"
#include "proto/code_tools_service.pb.h"

namespace garuda::knowledge {

absl::StatusOr<const Index*> IndexCache::Current(bool* rebuilt) {
  if (rebuilt != nullptr) *rebuilt = false;
  ASSIGN_OR_RETURN(std::vector<std::string> paths, ListSourceFiles(project_));
  std::vector<std::string> signature;
  signature.reserve(paths.size());
  for (const std::string& path : paths) {
    struct stat st;
    std::string full = absl::StrCat(project_, "/", path);
    if (::stat(full.c_str(), &st) != 0) {
      signature.push_back(absl::StrCat(path, " gone"));
      continue;
    }
    signature.push_back(absl::StrCat(path, " ", st.st_size, " ",
                                     st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec,
                                     " ", st.st_ino));
  }
  if (index_ == nullptr || signature != signature_) {
    ASSIGN_OR_RETURN(index_, BuildIndex(project_));
    signature_ = std::move(signature);
    if (rebuilt != nullptr) *rebuilt = true;
  }
  return index_.get();
}

namespace {

enum State { kOpen };

constexpr int kMaxModelResults = 2000;

}  // namespace

absl::Status ServeCodeTools(ipc::Channel& channel,
                            const CodeToolsServerOptions& options) {
  using code_tools::CodeToolsReply;
  using code_tools::CodeToolsRequest;
  IndexCache cache(options.project);
  Answerer answerer(options.project, options.lsp);
  ipc::Dispatcher<CodeToolsRequest, CodeToolsReply> dispatcher(kOpen);
  dispatcher.NameState(kOpen, "open");
  dispatcher.On(CodeToolsRequest::kDescribe, {kOpen},
                [&](const CodeToolsRequest&, std::vector<UniqueFd>&,
                    CodeToolsReply* reply) -> absl::Status {
                  ASSIGN_OR_RETURN(std::vector<std::string> paths,
                                   ListSourceFiles(options.project));
                  std::set<std::string> languages;
                  for (const std::string& path : paths) {
                    std::string language = LanguageOfPath(path);
                    if (!language.empty()) languages.insert(language);
                  }
                  auto* described = reply->mutable_described();
                  for (const std::string& language : languages) {
                    described->add_languages(language);
                  }
                  described->set_lockdown(options.lockdown);
                  return absl::OkStatus();
                });
  dispatcher.On(
      CodeToolsRequest::kQuery, {kOpen},
      [&](const CodeToolsRequest& request, std::vector<UniqueFd>&,
          CodeToolsReply* reply) -> absl::Status {
        const code_tools::Query& query = request.query();
        RETURN_IF_ERROR(ValidateOperation(query.operation()));
        if (query.symbol().empty() &&
            (query.path().empty() || query.line() < 1 || query.column() < 1)) {
          return absl::InvalidArgumentError(
              "a query needs a symbol, or a path with a line and a column "
              "(1-based)");
        }
        bool rebuilt = false;
        ASSIGN_OR_RETURN(const Index* index, cache.Current(&rebuilt));
        if (rebuilt) answerer.ForgetServers();
        CodeQuestion question;
        question.operation = query.operation();
        question.position = {query.path(), query.line(), query.column()};
        question.symbol = query.symbol();
        if (query.depth() > 0) question.depth = std::min(query.depth(), 10);
        question.max_results =
            query.max_results() > 0
                ? std::min<int>(query.max_results(), kMaxModelResults)
                : 500;
        *reply->mutable_answer() =
            AnswerToProto(answerer.Answer(*index, question));
        return absl::OkStatus();
      });
  return dispatcher.Serve(channel);
}

}  // namespace garuda::knowledge
