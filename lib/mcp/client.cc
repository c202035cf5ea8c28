// First stub: the interface compiles; the protocol follows.
#include "lib/mcp/client.h"

namespace garuda {
namespace mcp {

class Client::Impl {
 public:
  std::string server_name;
  ServerInfo info;
};

namespace {
absl::Status Unimplemented() {
  return absl::UnimplementedError("lib/mcp: not implemented yet");
}
}  // namespace

std::unique_ptr<Transport> StdioTransport(UniqueFd, UniqueFd, std::string) {
  return nullptr;
}
absl::StatusOr<std::unique_ptr<Transport>> HttpTransport(HttpOptions,
                                                         std::string) {
  return Unimplemented();
}

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(
    std::string, std::unique_ptr<Transport>, ConnectOptions) {
  return Unimplemented();
}
Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;
const std::string& Client::server_name() const { return impl_->server_name; }
const ServerInfo& Client::server_info() const { return impl_->info; }
absl::StatusOr<ToolList> Client::ListTools(absl::Duration) {
  return Unimplemented();
}
absl::StatusOr<CallResult> Client::CallTool(absl::string_view, const Value&,
                                            const CallOptions&) {
  return Unimplemented();
}
absl::Status Client::Ping(absl::Duration) { return Unimplemented(); }
bool Client::ToolsChanged() const { return false; }
absl::StatusOr<std::vector<Resource>> Client::ListResources(absl::Duration) {
  return Unimplemented();
}
absl::StatusOr<ResourceContents> Client::ReadResource(absl::string_view,
                                                      absl::Duration) {
  return Unimplemented();
}
absl::StatusOr<std::vector<Prompt>> Client::ListPrompts(absl::Duration) {
  return Unimplemented();
}
absl::StatusOr<PromptResult> Client::GetPrompt(
    absl::string_view, const std::map<std::string, std::string>&,
    absl::Duration) {
  return Unimplemented();
}
absl::Status Client::Poll() { return Unimplemented(); }
absl::Status Client::broken() const { return Unimplemented(); }
void Client::Close() {}

}  // namespace mcp
}  // namespace garuda
