#include "lib/mcp/client.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/acp/json_rpc.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"
#include "lib/mcp/client_impl.h"
#include "lib/mcp/wire.h"
#include "lib/provider/json.h"

namespace garuda {
namespace mcp {

using acp::Object;
using acp::Set;
using acp::Str;

namespace {

bool IsLegacyVersion(absl::string_view version) {
  for (const char* ours : kProtocolVersions) {
    if (version == ours && version != kModernVersion) return true;
  }
  return false;
}

std::string OurVersions() { return absl::StrJoin(kProtocolVersions, ", "); }

}  // namespace

void Client::Impl::ReadServerInfo(const Value& info) {
  info_.name = Field(info, "name");
  info_.version = Field(info, "version");
  info_.title = Field(info, "title");
}

void Client::Impl::ReadCapabilities(const Value& capabilities) {
  info_.capabilities = capabilities;
  info_.has_tools = provider::ObjectMember(capabilities, "tools") != nullptr;
  info_.has_resources =
      provider::ObjectMember(capabilities, "resources") != nullptr;
  info_.has_prompts =
      provider::ObjectMember(capabilities, "prompts") != nullptr;
}

absl::Status Client::Impl::StartModern(const Value* discovered,
                                       absl::Time deadline) {
  modern_ = true;
  Value result;
  if (discovered != nullptr) {
    result = *discovered;
  } else {
    // Told the version by an error: ask again for the rest.
    ASSIGN_OR_RETURN(
        result, Call("server/discover", Object(),
                     std::max(deadline - absl::Now(), absl::ZeroDuration())));
  }
  const Value* capabilities = provider::ObjectMember(result, "capabilities");
  ReadCapabilities(capabilities != nullptr ? *capabilities : Object());
  info_.instructions =
      VisibleText(provider::StringMember(result, "instructions"), 16 << 10);
  if (const Value* meta = provider::ObjectMember(result, "_meta")) {
    if (const Value* server = provider::ObjectMember(*meta, kMetaServerInfo)) {
      ReadServerInfo(*server);
    }
  }
  info_.protocol_version = kModernVersion;
  transport_->SetProtocolVersion(kModernVersion);
  // list_changed comes on a subscription in this revision.
  const Value* tools = provider::ObjectMember(info_.capabilities, "tools");
  if (tools != nullptr && BoolMember(*tools, "listChanged", false)) {
    const int64_t listen = next_id_++;
    Value params = Object();
    Value filter = Object();
    Set(filter, "toolsListChanged", acp::Bool(true));
    Set(params, "notifications", std::move(filter));
    AddMeta(params, std::nullopt);
    RETURN_IF_ERROR(
        Send(RpcRequest(listen, "subscriptions/listen", std::move(params))));
    listen_id_ = listen;
  }
  return absl::OkStatus();
}

absl::Status Client::Impl::StartLegacy(absl::string_view version,
                                       absl::Time deadline) {
  Value capabilities = Object();
  Value roots = Object();
  Set(roots, "listChanged", acp::Bool(false));
  Set(capabilities, "roots", std::move(roots));
  Value client = Object();
  Set(client, "name", Str(options_.client_name));
  Set(client, "version",
      Str(options_.client_version.empty() ? "0" : options_.client_version));
  Value params = Object();
  Set(params, "protocolVersion", Str(version));
  Set(params, "capabilities", std::move(capabilities));
  Set(params, "clientInfo", std::move(client));
  absl::StatusOr<Value> result =
      Call("initialize", std::move(params),
           std::max(deadline - absl::Now(), absl::ZeroDuration()));
  if (!result.ok() && late_discover_.has_value()) {
    // A slow server of 2026-07-28 answered the probe after all, while
    // initialize waited: it is that revision (initialize, unknown to it,
    // is answered with an error that nobody waits for).
    const Value discovered = *std::move(late_discover_);
    late_discover_.reset();
    return StartModern(&discovered, deadline);
  }
  RETURN_IF_ERROR(result.status());
  const std::string chosen = provider::StringMember(*result, "protocolVersion");
  if (!IsLegacyVersion(chosen)) {
    return absl::FailedPreconditionError(ServerMessage(
        name_,
        absl::StrCat("answered initialize with protocol version \"",
                     VisibleText(chosen, 100),
                     "\", which garuda does not speak (", OurVersions(), ")")));
  }
  info_.protocol_version = chosen;
  if (const Value* server = provider::ObjectMember(*result, "serverInfo")) {
    ReadServerInfo(*server);
  }
  const Value* server_capabilities =
      provider::ObjectMember(*result, "capabilities");
  ReadCapabilities(server_capabilities != nullptr ? *server_capabilities
                                                  : Object());
  info_.instructions =
      VisibleText(provider::StringMember(*result, "instructions"), 16 << 10);
  transport_->SetProtocolVersion(chosen);
  return Send(RpcRequest(std::nullopt, "notifications/initialized", Value()));
}

absl::Status Client::Impl::Start() {
  const absl::Time deadline = absl::Now() + options_.start_timeout;
  // 1. The 2026-07-28 probe, server/discover, with its _meta. A server of
  // that revision answers with its versions; one of the earlier revisions
  // answers with an error or not at all, and gets initialize.
  modern_ = true;
  const int64_t id = next_id_++;
  Value params = Object();
  AddMeta(params, std::nullopt);
  modern_ = false;
  RETURN_IF_ERROR(Send(RpcRequest(id, "server/discover", std::move(params))));
  const absl::Duration probe =
      std::min(options_.discover_timeout, options_.start_timeout);
  absl::StatusOr<RpcMessage> answer =
      Await("server/discover", id, std::min(deadline, absl::Now() + probe),
            probe, nullptr, /*cancel_on_timeout=*/false);
  if (!answer.ok()) {
    if (answer.status().code() != absl::StatusCode::kDeadlineExceeded) {
      return answer.status();
    }
    // 2a. No answer yet: taken for an earlier revision, but a late answer
    // to the probe is still looked for while initialize waits.
    probe_id_ = id;
    return StartLegacy(kProtocolVersions[1], deadline);
  }
  const ProbeAnswer read = ReadProbeAnswer(*answer);
  if (!read.listed) return StartLegacy(kProtocolVersions[1], deadline);
  if (Lists(read, kModernVersion)) {
    return StartModern(read.discovered ? &answer->result : nullptr, deadline);
  }
  // 2b. A server that lists only earlier revisions (a dual-era one that
  // prefers them): the best of those we speak.
  for (const char* version : kProtocolVersions) {
    if (IsLegacyVersion(version) && Lists(read, version)) {
      return StartLegacy(version, deadline);
    }
  }
  return absl::FailedPreconditionError(ServerMessage(
      name_, absl::StrCat("speaks protocol versions ",
                          VisibleText(absl::StrJoin(read.supported, ", "), 300),
                          " and none of garuda's (", OurVersions(), ")")));
}

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(
    std::string server_name, std::unique_ptr<Transport> transport,
    ConnectOptions options) {
  if (transport == nullptr) {
    return absl::InvalidArgumentError(
        ServerMessage(server_name, "no transport to connect over"));
  }
  auto impl = std::make_unique<Impl>(std::move(server_name),
                                     std::move(transport), std::move(options));
  absl::Status started = impl->Start();
  if (!started.ok()) {
    impl->Close();
    return started;
  }
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Client::~Client() { Close(); }

const std::string& Client::server_name() const { return impl_->name_; }

const ServerInfo& Client::server_info() const { return impl_->info_; }

absl::StatusOr<ToolList> Client::ListTools(absl::Duration timeout) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->ListTools(timeout);
}

absl::StatusOr<CallResult> Client::CallTool(absl::string_view name,
                                            const Value& arguments,
                                            const CallOptions& options) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->CallTool(name, arguments, options);
}

absl::Status Client::Ping(absl::Duration timeout) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->Ping(timeout);
}

bool Client::ToolsChanged() const { return impl_->tools_changed_.load(); }

absl::StatusOr<std::vector<Resource>> Client::ListResources(
    absl::Duration timeout) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->ListResources(timeout);
}

absl::StatusOr<ResourceContents> Client::ReadResource(absl::string_view uri,
                                                      absl::Duration timeout) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->ReadResource(uri, timeout);
}

absl::StatusOr<std::vector<Prompt>> Client::ListPrompts(
    absl::Duration timeout) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->ListPrompts(timeout);
}

absl::StatusOr<PromptResult> Client::GetPrompt(
    absl::string_view name, const std::map<std::string, std::string>& args,
    absl::Duration timeout) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->GetPrompt(name, args, timeout);
}

absl::Status Client::Poll() {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->Poll();
}

absl::Status Client::broken() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->broken_;
}

void Client::Close() {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->Close();
}

}  // namespace mcp
}  // namespace garuda
