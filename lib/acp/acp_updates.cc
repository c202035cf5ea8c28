#include "lib/acp/acp_updates.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace garuda {
namespace acp {

void SessionUpdates::Send(Value update) {
  Value params = Object();
  Set(params, "sessionId", Str(session_id_));
  Set(params, "update", std::move(update));
  link_->Notify("session/update", params);
}

std::optional<std::string> SessionUpdates::RequestPermission(Value tool_call,
                                                             Value options) {
  Value params = Object();
  Set(params, "sessionId", Str(session_id_));
  Set(params, "toolCall", std::move(tool_call));
  Set(params, "options", std::move(options));
  return link_->RequestPermission(params);
}

Value TextBlock(absl::string_view text) {
  Value block = Object();
  Set(block, "type", Str("text"));
  Set(block, "text", Str(text));
  return block;
}

Value TextContent(absl::string_view text) {
  Value content = Object();
  Set(content, "type", Str("content"));
  Set(content, "content", TextBlock(text));
  return content;
}

Value PermissionOption(absl::string_view id, absl::string_view name,
                       absl::string_view kind) {
  Value option = Object();
  Set(option, "optionId", Str(id));
  Set(option, "name", Str(name));
  Set(option, "kind", Str(kind));
  return option;
}

std::string JoinPathUnder(const std::string& root, const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  return absl::StrCat(root, "/", path);
}

}  // namespace acp
}  // namespace garuda
