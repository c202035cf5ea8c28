// The channel between the ACP front and one session worker: JSON-RPC lines
// over a socketpair, of which each side accepts a fixed set of messages.
// This header is that set (docs/acp.md lists it too): one verb per message
// a side may receive, and a parser that turns a line into a verb or says
// why the line is not one. The front ends a worker whose line does not
// parse; a worker ignores a line from the front that does not.
#ifndef GARUDA_LIB_ACP_WORKER_CHANNEL_H_
#define GARUDA_LIB_ACP_WORKER_CHANNEL_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/acp/json_rpc.h"

namespace garuda {
namespace acp {

// What a worker may send the front.
enum class FromWorkerVerb {
  kResponse,           // the answer to a request the front forwarded
  kSessionUpdate,      // notification session/update {sessionId, update}
  kRequestPermission,  // request session/request_permission {sessionId, ...}
};

// What the front may send a worker.
enum class FromFrontVerb {
  kOpen,      // request session/new or session/load (the first line only)
  kPrompt,    // request session/prompt {sessionId, prompt}
  kCancel,    // notification session/cancel {sessionId}
  kResponse,  // the editor's answer to a session/request_permission
  // A request of any other method: the worker answers METHOD_NOT_FOUND.
  kOtherRequest,
};

struct WorkerMessage {
  FromWorkerVerb verb = FromWorkerVerb::kResponse;
  Message message;
  // kSessionUpdate and kRequestPermission: their "sessionId" (nullopt when
  // absent), which the front checks against the worker's own.
  std::optional<std::string> session_id;
};

struct FrontMessage {
  FromFrontVerb verb = FromFrontVerb::kResponse;
  Message message;
};

// INVALID_ARGUMENT, saying what the worker sent: "a message that is not
// JSON-RPC", or "<method>, which a worker may not send".
absl::StatusOr<WorkerMessage> ParseFromWorker(const LineReader::Line& line);

// INVALID_ARGUMENT for a line that is not JSON-RPC, or a notification the
// front never sends.
absl::StatusOr<FrontMessage> ParseFromFront(const LineReader::Line& line);

}  // namespace acp
}  // namespace garuda

#endif  // GARUDA_LIB_ACP_WORKER_CHANNEL_H_
