// A person at a pseudo-terminal, for the helpers' own questions: the
// applier and the stager are started with --consent=terminal
// --terminal=<this pty's path>, and this person reads what they show and
// types the answers queued for them.
#ifndef GARUDA_TESTS_AGENT_PTY_PERSON_H_
#define GARUDA_TESTS_AGENT_PTY_PERSON_H_

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/base/unique_fd.h"

namespace garuda {
namespace testing {

class PtyPerson {
 public:
  static absl::StatusOr<std::unique_ptr<PtyPerson>> Open();
  ~PtyPerson();

  // The terminal's path, for --terminal.
  const std::string& path() const { return path_; }

  // The next answers, one per question, in order ("y", "s", "n", "a",
  // "d", "c", "v"; each is typed with a newline after it, which a
  // question that reads one key press ignores). A question with none
  // left gets "n" (a permission question), "d" (the change question and
  // each file of its choice) or "q" (the pager): the person says no.
  void Queue(const std::string& answer);
  // The same, typed exactly as given, with no newline after it: one key
  // press ("a"), or keys for the pager (" ").
  void QueueKeys(const std::string& keys);
  // Called with everything shown so far when a question waits, before its
  // answer is typed (a test changes a file "meanwhile" here).
  void OnQuestion(std::function<void(const std::string& shown)> callback);

  // How many questions were asked, and what the terminal showed.
  int questions() const { return questions_.load(); }
  std::string Shown() const;
  // Waits until `questions()` reaches `count` or `timeout` passes.
  bool WaitForQuestions(int count, absl::Duration timeout) const;

  // The terminal's own end (the slave), to read its settings.
  int terminal_fd() const { return slave_.get(); }

 private:
  PtyPerson() = default;
  void Loop();

  UniqueFd master_, slave_;
  std::string path_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> questions_{0};
  mutable std::mutex mu_;
  std::string shown_;
  size_t answered_up_to_ = 0;
  std::deque<std::string> answers_;  // each as typed
  std::function<void(const std::string&)> on_question_;
};

}  // namespace testing
}  // namespace garuda

#endif  // GARUDA_TESTS_AGENT_PTY_PERSON_H_
