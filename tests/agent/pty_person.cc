#include "tests/agent/pty_person.h"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"

namespace garuda {
namespace testing {
namespace {

// The prompts of lib/question: the permission question, the change
// question and its per-file choice (each offers [d]iscard, with or without
// [a]pply), and the pager's last line.
constexpr const char* kPermissionPrompt = "Allow? [";
constexpr const char* kChangePrompt = "[d]iscard";
constexpr const char* kPagerPrompt = "[q] quit";

}  // namespace

absl::StatusOr<std::unique_ptr<PtyPerson>> PtyPerson::Open() {
  std::unique_ptr<PtyPerson> person(new PtyPerson());
  int master = -1, slave = -1;
  char name[256];
  if (::openpty(&master, &slave, name, nullptr, nullptr) != 0) {
    return LastErrnoStatus("openpty");
  }
  person->master_ = UniqueFd(master);
  // Kept open by the test too, so the master never reads EIO between two
  // helpers' questions.
  person->slave_ = UniqueFd(slave);
  person->path_ = name;
  person->thread_ = std::thread([p = person.get()] { p->Loop(); });
  return person;
}

PtyPerson::~PtyPerson() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void PtyPerson::Queue(const std::string& answer) {
  std::lock_guard<std::mutex> lock(mu_);
  answers_.push_back(absl::StrCat(answer, "\n"));
}

void PtyPerson::QueueKeys(const std::string& keys) {
  std::lock_guard<std::mutex> lock(mu_);
  answers_.push_back(keys);
}

void PtyPerson::OnQuestion(
    std::function<void(const std::string& shown)> callback) {
  std::lock_guard<std::mutex> lock(mu_);
  on_question_ = std::move(callback);
}

std::string PtyPerson::Shown() const {
  std::lock_guard<std::mutex> lock(mu_);
  return shown_;
}

bool PtyPerson::WaitForQuestions(int count, absl::Duration timeout) const {
  absl::Time deadline = absl::Now() + timeout;
  while (questions_.load() < count) {
    if (absl::Now() > deadline) return false;
    ::poll(nullptr, 0, 10);  // between two looks at the counter
  }
  return true;
}

void PtyPerson::Loop() {
  while (!stop_) {
    struct pollfd fd = {master_.get(), POLLIN, 0};
    // A short poll so that the destructor is not kept waiting.
    int ready = ::poll(&fd, 1, 50);
    if (ready <= 0) continue;
    char buffer[4096];
    ssize_t n = ::read(master_.get(), buffer, sizeof(buffer));
    if (n <= 0) continue;
    std::string answer;
    std::function<void(const std::string&)> callback;
    std::string shown;
    {
      std::lock_guard<std::mutex> lock(mu_);
      shown_.append(buffer, static_cast<size_t>(n));
      std::string fresh = shown_.substr(answered_up_to_);
      bool permission = fresh.find(kPermissionPrompt) != std::string::npos;
      bool change = fresh.find(kChangePrompt) != std::string::npos;
      bool pager = fresh.find(kPagerPrompt) != std::string::npos;
      // A question's prompt ends its screen: wait for the whole of it.
      if (fresh.empty() || (fresh.back() != ' ' && !pager)) continue;
      if (!permission && !change && !pager) continue;
      answered_up_to_ = shown_.size();
      if (!answers_.empty()) {
        answer = answers_.front();
        answers_.pop_front();
      } else {
        answer = permission ? "n\n" : pager ? "q" : "d\n";
      }
      callback = on_question_;
      shown = shown_;
    }
    if (callback) callback(shown);
    ++questions_;
    (void)WriteAll(master_.get(), answer);
  }
}

}  // namespace testing
}  // namespace garuda
