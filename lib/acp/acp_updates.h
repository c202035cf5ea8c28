// What an ACP session worker sends its editor about one session: the
// session/update notifications and the session/request_permission
// requests (through the front, lib/acp/worker_link.h), and the content
// blocks they carry.
#ifndef GARUDA_LIB_ACP_ACP_UPDATES_H_
#define GARUDA_LIB_ACP_ACP_UPDATES_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "lib/acp/json_rpc.h"
#include "lib/acp/worker_link.h"

namespace garuda {
namespace acp {

class SessionUpdates {
 public:
  explicit SessionUpdates(WorkerLink* link) : link_(link) {}
  void set_session_id(const std::string& id) { session_id_ = id; }
  const std::string& session_id() const { return session_id_; }

  // One session/update of this session.
  void Send(Value update);
  // session/request_permission of this session: the option selected, or
  // nullopt (WorkerLink::RequestPermission).
  std::optional<std::string> RequestPermission(Value tool_call, Value options);

 private:
  WorkerLink* link_;
  std::string session_id_;
};

// A text ContentBlock.
Value TextBlock(absl::string_view text);
// A ToolCallContent of text.
Value TextContent(absl::string_view text);
// A PermissionOption.
Value PermissionOption(absl::string_view id, absl::string_view name,
                       absl::string_view kind);
// `path` under `root` unless it is absolute.
std::string JoinPathUnder(const std::string& root, const std::string& path);

}  // namespace acp
}  // namespace garuda

#endif  // GARUDA_LIB_ACP_ACP_UPDATES_H_
