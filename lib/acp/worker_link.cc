#include "lib/acp/worker_link.h"

#include "absl/strings/str_cat.h"
#include "lib/base/files.h"

namespace garuda {
namespace acp {

void WorkerLink::Send(const std::string& line) {
  std::lock_guard<std::mutex> lock(write_mutex_);
  WriteAll(fd_, line).IgnoreError();
}

void WorkerLink::Notify(absl::string_view method, const Value& params) {
  Send(NotificationLine(method, params));
}

std::optional<std::string> WorkerLink::RequestPermission(const Value& params) {
  int id;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_ || turn_cancelled_) return std::nullopt;
    id = next_id_++;
    pending_[id];
  }
  Send(RequestLine(Num(id), "session/request_permission", params));
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] {
    return ended_ || turn_cancelled_ || pending_[id].has_value();
  });
  std::optional<std::string> answer;
  if (pending_[id].has_value()) answer = *pending_[id];
  pending_.erase(id);
  return answer;
}

bool WorkerLink::Deliver(const Message& response) {
  if (response.id.kind_case() != Value::kNumberValue) return false;
  const int id = static_cast<int>(response.id.number_value());
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = pending_.find(id);
  if (it == pending_.end() || it->second.has_value()) return false;
  std::optional<std::string> selected;
  if (!response.error) {
    // {"outcome": {"outcome": "selected", "optionId": "..."}}; anything
    // else ("cancelled", a malformed answer) is no.
    if (const Value* outcome = Field(response.result, "outcome")) {
      if (StringField(*outcome, "outcome") == "selected") {
        selected = StringField(*outcome, "optionId");
      }
    }
  }
  it->second = selected;
  changed_.notify_all();
  return true;
}

void WorkerLink::CancelTurn() {
  std::lock_guard<std::mutex> lock(mutex_);
  turn_cancelled_ = true;
  changed_.notify_all();
}

void WorkerLink::BeginTurn() {
  std::lock_guard<std::mutex> lock(mutex_);
  turn_cancelled_ = false;
}

void WorkerLink::End() {
  std::lock_guard<std::mutex> lock(mutex_);
  ended_ = true;
  changed_.notify_all();
}

}  // namespace acp
}  // namespace garuda
