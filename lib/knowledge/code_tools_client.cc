#include "lib/knowledge/code_tools_client.h"

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/knowledge/answer_proto.h"

namespace garuda::knowledge {

constexpr char kPeer[] = "garuda-agent tool serve";

absl::StatusOr<std::unique_ptr<CodeToolsHelper>> CodeToolsHelper::Start(
    const CodeToolsHelperOptions& options) {
  ipc::HelperOptions spawn;
  spawn.argv = {options.program, "tool", "serve", "--channel-fd=3",
                absl::StrCat("--project=", options.project)};
  if (!options.accept_weaker_lockdown.empty()) {
    spawn.argv.push_back(absl::StrCat("--accept-weaker-lockdown=",
                                      options.accept_weaker_lockdown));
  }
  spawn.channel.peer_name = kPeer;
  spawn.channel.max_frame_bytes = kCodeToolsFrameBytes;
  spawn.new_process_group = true;
  std::unique_ptr<CodeToolsHelper> helper(new CodeToolsHelper());
  ASSIGN_OR_RETURN(helper->process_, ipc::HelperProcess::Spawn(spawn));
  code_tools::CodeToolsRequest request;
  request.mutable_describe();
  ASSIGN_OR_RETURN(code_tools::CodeToolsReply reply,
                   helper->Call(std::move(request)));
  if (!reply.has_described()) {
    return absl::InternalError(
        absl::StrCat(kPeer, ": no description in the reply to describe"));
  }
  helper->languages_.assign(reply.described().languages().begin(),
                            reply.described().languages().end());
  helper->lockdown_ = reply.described().lockdown();
  return helper;
}

absl::StatusOr<code_tools::CodeToolsReply> CodeToolsHelper::Call(
    code_tools::CodeToolsRequest request) {
  request.set_seq(++seq_);
  code_tools::CodeToolsReply reply;
  RETURN_IF_ERROR(process_->Call(request, &reply));
  if (reply.seq() != request.seq()) {
    return absl::DataLossError(absl::StrCat(kPeer, ": reply with seq ",
                                            reply.seq(), " to request ",
                                            request.seq()));
  }
  if (reply.has_error()) {
    absl::StatusCode code = static_cast<absl::StatusCode>(reply.error().code());
    if (code == absl::StatusCode::kOk) code = absl::StatusCode::kUnknown;
    return absl::Status(code,
                        absl::StrCat(kPeer, ": ", reply.error().message()));
  }
  return reply;
}

absl::StatusOr<QueryResult> CodeToolsHelper::Ask(
    const code_tools::Query& query) {
  code_tools::CodeToolsRequest request;
  *request.mutable_query() = query;
  ASSIGN_OR_RETURN(code_tools::CodeToolsReply reply, Call(std::move(request)));
  if (!reply.has_answer()) {
    return absl::InternalError(
        absl::StrCat(kPeer, ": no answer in the reply to a query"));
  }
  return AnswerFromProto(reply.answer());
}

absl::Status CodeToolsHelper::Stop() { return process_->Stop(); }

}  // namespace garuda::knowledge
