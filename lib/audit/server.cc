#include "lib/audit/server.h"

#include "absl/types/span.h"
#include "lib/base/status_macros.h"
#include "lib/ipc/dispatcher.h"
#include "proto/audit_log.pb.h"
#include "proto/auditor_service.pb.h"

namespace garuda {
namespace {

enum State { kOpen = 0, kClosed = 1 };

void AddWarnings(std::vector<std::string>& from,
                 google::protobuf::RepeatedPtrField<std::string>* to,
                 std::vector<std::string>* all) {
  for (const std::string& warning : from) {
    *to->Add() = warning;
    all->push_back(warning);
  }
}

}  // namespace

absl::Status ServeAuditChannel(ipc::Channel& channel, AuditWriter& writer,
                               std::vector<std::string>* warnings) {
  using Dispatcher = ipc::Dispatcher<audit::AuditRequest, audit::AuditReply>;
  Dispatcher dispatcher(kOpen);
  dispatcher.NameState(kOpen, "open").NameState(kClosed, "closed");
  dispatcher.On(audit::AuditRequest::kAppend, {kOpen},
                [&](const audit::AuditRequest& request, std::vector<UniqueFd>&,
                    audit::AuditReply* reply) -> absl::Status {
                  const audit::Append& append = request.append();
                  std::vector<audit::AuditEvent> events(append.events().begin(),
                                                        append.events().end());
                  ASSIGN_OR_RETURN(AppendResult result,
                                   writer.Append(events, append.durable()));
                  audit::Appended* appended = reply->mutable_appended();
                  appended->set_first_seq(result.first_seq);
                  appended->set_last_seq(result.last_seq);
                  appended->set_hash(result.hash);
                  appended->set_durable(result.durable);
                  AddWarnings(result.warnings, appended->mutable_warnings(),
                              warnings);
                  return absl::OkStatus();
                });
  dispatcher.On(audit::AuditRequest::kFlush, {kOpen},
                [&](const audit::AuditRequest&, std::vector<UniqueFd>&,
                    audit::AuditReply* reply) -> absl::Status {
                  ASSIGN_OR_RETURN(AppendResult result, writer.Sync());
                  reply->mutable_flushed()->set_seq(result.last_seq);
                  reply->mutable_flushed()->set_hash(result.hash);
                  return absl::OkStatus();
                });
  dispatcher.On(
      audit::AuditRequest::kClose, {kOpen},
      [&](const audit::AuditRequest&, std::vector<UniqueFd>&,
          audit::AuditReply* reply) -> absl::Status {
        ASSIGN_OR_RETURN(AppendResult result, writer.Close());
        audit::Closed* closed = reply->mutable_closed();
        closed->set_seq(result.last_seq);
        closed->set_hash(result.hash);
        AddWarnings(result.warnings, closed->mutable_warnings(), warnings);
        dispatcher.StopAfterReply();
        return absl::OkStatus();
      },
      kClosed);
  absl::Status served = dispatcher.Serve(channel);
  // A client that went away without close still ends the session cleanly;
  // Close() is a no-op after the close verb.
  absl::StatusOr<AppendResult> closed = writer.Close();
  if (closed.ok()) {
    for (std::string& warning : closed->warnings) warnings->push_back(warning);
  }
  RETURN_IF_ERROR(served);
  return closed.status();
}

}  // namespace garuda
