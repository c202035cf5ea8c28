// A session worker's end of its socket to the front (`garuda-agent acp`):
// JSON-RPC lines out from any thread, and the editor's answers to
// session/request_permission, which the worker's reader thread delivers
// while the turn waits for them.
#ifndef GARUDA_LIB_ACP_WORKER_LINK_H_
#define GARUDA_LIB_ACP_WORKER_LINK_H_

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "lib/acp/json_rpc.h"

namespace garuda {
namespace acp {

class WorkerLink {
 public:
  explicit WorkerLink(int fd) : fd_(fd) {}

  // One whole line (a failed write means the front is gone: the reader
  // thread sees the end too, and the session ends).
  void Send(const std::string& line);
  void Notify(absl::string_view method, const Value& params);

  // Sends session/request_permission and waits for the answer: the option
  // the editor selected, or nullopt for "cancelled", an error, a
  // session/cancel of the turn, or the front's end. Each of those is a no.
  std::optional<std::string> RequestPermission(const Value& params);

  // From the reader thread: a response to one of our requests (false when
  // no request of ours has that id).
  bool Deliver(const Message& response);
  // session/cancel: every pending question is answered no, and so is any
  // asked until the next turn begins.
  void CancelTurn();
  void BeginTurn();
  // The front is gone: no answer will come.
  void End();

 private:
  int fd_;
  std::mutex write_mutex_;
  std::mutex mutex_;
  std::condition_variable changed_;
  int next_id_ = 1;
  // Pending requests by id; the value is set once answered.
  std::map<int, std::optional<std::optional<std::string>>> pending_;
  bool turn_cancelled_ = false;
  bool ended_ = false;
};

}  // namespace acp
}  // namespace garuda

#endif  // GARUDA_LIB_ACP_WORKER_LINK_H_
