#include "lib/audit/client.h"

#include "lib/base/status_macros.h"
#include "lib/ipc/client.h"
#include "proto/auditor_service.pb.h"

namespace garuda {
namespace {

class AuditChannel : public AuditSink {
 public:
  explicit AuditChannel(ipc::HelperProcess* process)
      : client_(process, "garuda-auditor") {}

  absl::Status Record(const audit::AuditEvent& event) override {
    audit::AuditRequest request;
    *request.mutable_append()->add_events() = event;
    ASSIGN_OR_RETURN(audit::AuditReply reply, client_.Call(request));
    if (!reply.has_appended()) {
      return absl::DataLossError("garuda-auditor: no Appended reply");
    }
    return absl::OkStatus();
  }

  absl::Status Close() override {
    audit::AuditRequest request;
    request.mutable_close();
    return client_.Call(request).status();
  }

 private:
  ipc::Client<audit::AuditRequest, audit::AuditReply> client_;
};

}  // namespace

std::unique_ptr<AuditSink> AuditChannelClient(ipc::HelperProcess* auditor) {
  return std::make_unique<AuditChannel>(auditor);
}

}  // namespace garuda
