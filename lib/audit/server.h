// The auditor's channel (proto/auditor_service.proto, AuditRequest/AuditReply):
// the verbs append, flush and close, each accepted only while the session is
// open.
#ifndef GARUDA_LIB_AUDIT_SERVER_H_
#define GARUDA_LIB_AUDIT_SERVER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "lib/audit/writer.h"
#include "lib/ipc/channel.h"

namespace garuda {

// Serves until the client sends close or closes the channel, then ends the
// session (writer.Close(): fsync, checkpoint, last head to the witness).
// Returns an error when the protocol was broken or the writer failed;
// `warnings` collects witness failures for the auditor to show.
absl::Status ServeAuditChannel(ipc::Channel& channel, AuditWriter& writer,
                               std::vector<std::string>* warnings);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_SERVER_H_
