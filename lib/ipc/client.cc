#include "lib/ipc/client.h"

namespace garuda {
namespace ipc {

absl::Status ErrorReplyStatus(const Error& error, absl::string_view peer) {
  absl::StatusCode code = static_cast<absl::StatusCode>(error.code());
  if (code == absl::StatusCode::kOk) code = absl::StatusCode::kUnknown;
  return absl::Status(code, absl::StrCat(peer, ": ", error.message()));
}

}  // namespace ipc
}  // namespace garuda
