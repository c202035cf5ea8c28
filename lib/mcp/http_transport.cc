// Streamable HTTP, through the session's proxy only.
#include "lib/mcp/client.h"
#include "lib/mcp/wire.h"

namespace garuda {
namespace mcp {

absl::StatusOr<std::unique_ptr<Transport>> HttpTransport(
    HttpOptions options, std::string server_name) {
  return absl::UnimplementedError(
      ServerMessage(server_name, "Streamable HTTP is not built yet"));
}

}  // namespace mcp
}  // namespace garuda
