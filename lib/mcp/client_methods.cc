// Client::Impl's MCP methods: tools, resources, prompts, ping, poll and
// close.
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

// What one Poll() reads at most.
constexpr int kMaxPolledMessages = 1000;

}  // namespace

absl::StatusOr<ToolList> Client::Impl::ListTools(absl::Duration timeout) {
  tools_changed_.store(false);
  ToolList list;
  std::set<std::string> names;
  size_t over = 0;
  size_t listed = 0;
  RETURN_IF_ERROR(Pages("tools/list", "tools", timeout, [&](const Value& item) {
    ++listed;
    if (list.tools.size() >= options_.max_tools) {
      ++over;
      return;
    }
    absl::StatusOr<Tool> tool = ReadTool(item);
    if (!tool.ok()) {
      list.problems.push_back(ServerMessage(
          name_, absl::StrCat("tool left out: ", tool.status().message())));
      return;
    }
    if (!names.insert(tool->name).second) {
      list.problems.push_back(ServerMessage(
          name_, absl::StrCat("tool \"", tool->name,
                              "\" listed twice; the first is kept")));
      return;
    }
    list.tools.push_back(*std::move(tool));
  }));
  if (over > 0) {
    list.problems.push_back(ServerMessage(
        name_, absl::StrCat("listed ", listed, " tools; only the first ",
                            options_.max_tools, " valid ones are offered (",
                            over, " left out)")));
  }
  return list;
}

absl::StatusOr<CallResult> Client::Impl::CallTool(absl::string_view name,
                                                  const Value& arguments,
                                                  const CallOptions& options) {
  Value params = Object();
  Set(params, "name", Str(name));
  Set(params, "arguments",
      arguments.kind_case() == Value::kStructValue ? arguments : Object());
  ASSIGN_OR_RETURN(Value result, Call("tools/call", std::move(params),
                                      options.timeout, &options));
  CallResult call;
  call.is_error = BoolMember(result, "isError", false);
  std::vector<std::string> parts;
  if (const Value* content = provider::Member(result, "content")) {
    if (content->kind_case() != Value::kListValue) {
      return absl::DataLossError(ServerMessage(
          name_, absl::StrCat("answered tools/call \"", VisibleText(name, 200),
                              "\" with content that is ",
                              JsonKindName(*content), ", not a list")));
    }
    for (const Value& block : content->list_value().values()) {
      parts.push_back(RenderContent(block));
    }
  }
  if (const Value* structured = provider::Member(result, "structuredContent")) {
    if (JsonSize(*structured) > options_.max_result_bytes) {
      call.truncated = true;
      parts.push_back(absl::StrCat("[structured content of ",
                                   JsonSize(*structured),
                                   " bytes left out: over the limit of ",
                                   options_.max_result_bytes, "]"));
    } else {
      call.structured_content = *structured;
      if (parts.empty()) parts.push_back(provider::ToJson(*structured));
    }
  }
  bool cut = false;
  call.text =
      VisibleText(absl::StrJoin(parts, "\n"), options_.max_result_bytes, &cut);
  if (cut) {
    call.truncated = true;
    absl::StrAppend(&call.text, "\n[cut at ", options_.max_result_bytes,
                    " bytes]");
  }
  return call;
}

absl::Status Client::Impl::Ping(absl::Duration timeout) {
  // 2026-07-28 has no ping: server/discover is the cheapest round trip.
  return Call(modern_ ? "server/discover" : "ping", Object(), timeout).status();
}

absl::StatusOr<std::vector<Resource>> Client::Impl::ListResources(
    absl::Duration timeout) {
  std::vector<Resource> resources;
  RETURN_IF_ERROR(
      Pages("resources/list", "resources", timeout, [&](const Value& item) {
        Resource resource;
        resource.uri = Field(item, "uri");
        if (resource.uri.empty()) return;
        resource.name = Field(item, "name");
        resource.title = Field(item, "title");
        resource.description = Field(item, "description");
        resource.mime_type = Field(item, "mimeType");
        resources.push_back(std::move(resource));
      }));
  return resources;
}

absl::StatusOr<ResourceContents> Client::Impl::ReadResource(
    absl::string_view uri, absl::Duration timeout) {
  Value params = Object();
  Set(params, "uri", Str(uri));
  ASSIGN_OR_RETURN(Value result,
                   Call("resources/read", std::move(params), timeout));
  const google::protobuf::ListValue* contents =
      provider::ListMember(result, "contents");
  if (contents == nullptr || contents->values_size() == 0 ||
      contents->values(0).kind_case() != Value::kStructValue) {
    return absl::DataLossError(ServerMessage(
        name_, absl::StrCat("answered resources/read ", VisibleText(uri, 300),
                            " without contents")));
  }
  const Value& first = contents->values(0);
  ResourceContents read;
  read.uri = Field(first, "uri");
  read.mime_type = Field(first, "mimeType");
  if (provider::HasStringMember(first, "blob")) {
    read.is_blob = true;
    read.blob_bytes = provider::StringMember(first, "blob").size() * 3 / 4;
    read.text = absl::StrCat("[", read.mime_type, ", about ", read.blob_bytes,
                             " bytes of binary data]");
  } else {
    bool cut = false;
    read.text = VisibleText(provider::StringMember(first, "text"),
                            options_.max_result_bytes, &cut);
    if (cut) absl::StrAppend(&read.text, "\n[cut]");
  }
  return read;
}

absl::StatusOr<std::vector<Prompt>> Client::Impl::ListPrompts(
    absl::Duration timeout) {
  std::vector<Prompt> prompts;
  RETURN_IF_ERROR(
      Pages("prompts/list", "prompts", timeout, [&](const Value& item) {
        Prompt prompt;
        prompt.name = Field(item, "name");
        if (prompt.name.empty()) return;
        prompt.title = Field(item, "title");
        prompt.description = Field(item, "description");
        if (const google::protobuf::ListValue* args =
                provider::ListMember(item, "arguments")) {
          for (const Value& arg : args->values()) {
            PromptArgument argument;
            argument.name = Field(arg, "name");
            argument.description = Field(arg, "description");
            argument.required = BoolMember(arg, "required", false);
            prompt.arguments.push_back(std::move(argument));
          }
        }
        prompts.push_back(std::move(prompt));
      }));
  return prompts;
}

absl::StatusOr<PromptResult> Client::Impl::GetPrompt(
    absl::string_view name, const std::map<std::string, std::string>& args,
    absl::Duration timeout) {
  Value params = Object();
  Set(params, "name", Str(name));
  Value arguments = Object();
  for (const auto& [key, value] : args) Set(arguments, key, Str(value));
  Set(params, "arguments", std::move(arguments));
  ASSIGN_OR_RETURN(Value result,
                   Call("prompts/get", std::move(params), timeout));
  const google::protobuf::ListValue* messages =
      provider::ListMember(result, "messages");
  if (messages == nullptr) {
    return absl::DataLossError(ServerMessage(
        name_, absl::StrCat("answered prompts/get \"", VisibleText(name, 200),
                            "\" without a \"messages\" list")));
  }
  PromptResult prompt;
  prompt.description = Field(result, "description");
  size_t total = 0;
  for (const Value& message : messages->values()) {
    PromptMessage rendered;
    rendered.role = Field(message, "role");
    const Value* content = provider::Member(message, "content");
    rendered.text = VisibleText(
        content != nullptr ? RenderContent(*content) : std::string(),
        options_.max_result_bytes);
    total += rendered.text.size();
    if (total > options_.max_result_bytes) {
      return absl::ResourceExhaustedError(ServerMessage(
          name_, absl::StrCat("answered prompts/get \"", VisibleText(name, 200),
                              "\" with more than ", options_.max_result_bytes,
                              " bytes")));
    }
    prompt.messages.push_back(std::move(rendered));
  }
  return prompt;
}

absl::Status Client::Impl::Poll() {
  RETURN_IF_ERROR(broken_);
  // A server that never stops sending must not keep Poll from returning:
  // the rest waits for the next request or Poll.
  for (int read = 0; read < kMaxPolledMessages; ++read) {
    absl::StatusOr<Value> got = transport_->Receive(absl::Now(), nullptr);
    if (!got.ok()) {
      if (got.status().code() == absl::StatusCode::kDeadlineExceeded) {
        return absl::OkStatus();
      }
      if (got.status().code() == absl::StatusCode::kResourceExhausted) {
        continue;
      }
      return Broken(got.status());
    }
    ASSIGN_OR_RETURN(RpcMessage message, Checked(*got));
    if (message.kind != RpcMessage::Kind::kResponse) {
      Handle(message, 0, nullptr);
    }
  }
  return absl::OkStatus();
}

void Client::Impl::Close() {
  if (closed_) return;
  closed_ = true;
  if (listen_id_.has_value() && broken_.ok()) {
    SendCancelled(*listen_id_, "the client is closing");
  }
  transport_->Close();
}

}  // namespace mcp
}  // namespace garuda
