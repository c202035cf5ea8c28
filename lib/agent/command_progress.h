// A running command as the person follows it: the stager's watch
// (lib/staging/command_watch.h) turned into PersonDisplay::ShowCommandProgress
// calls, at most ten a second as output comes and once a second when it
// does not, with the elapsed time and the last line printed so far.
#ifndef GARUDA_LIB_AGENT_COMMAND_PROGRESS_H_
#define GARUDA_LIB_AGENT_COMMAND_PROGRESS_H_

#include <mutex>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "lib/agent/interaction.h"
#include "lib/base/cancel_flag.h"
#include "lib/staging/command_watch.h"

namespace garuda {
namespace agent {

class CommandProgressView {
 public:
  // `display` is not owned and outlives the view.
  explicit CommandProgressView(PersonDisplay* display) : display_(display) {}

  // The watch of one run; `cancel` (may be null) stops it. The view must
  // outlive the run.
  CommandWatch Watch(const CancelFlag* cancel);

  // The last line so far (for tests).
  std::string last_line();

 private:
  void Started();
  void Output(absl::string_view data);
  void Tick(absl::Duration elapsed);
  void Show(absl::Time now);

  PersonDisplay* display_;
  std::mutex mu_;
  absl::Time start_;
  absl::Time last_shown_ = absl::InfinitePast();
  std::string partial_;    // the line being printed
  std::string last_line_;  // the last whole or partial line with text
};

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_COMMAND_PROGRESS_H_
