// The session's person when there is no terminal: lines from a descriptor
// (standard input), and an Interaction that prints plainly and cannot ask,
// so every question is answered "no" (the session tells the model).
#ifndef GARUDA_LIB_AGENT_PLAIN_INTERACTION_H_
#define GARUDA_LIB_AGENT_PLAIN_INTERACTION_H_

#include <memory>

#include "lib/agent/interaction.h"

namespace garuda {
namespace agent {

// One line per ReadLine, without its newline; nullopt at end of input. The
// prompt is not printed.
std::unique_ptr<LineSource> MakeFdLineSource(int fd);

struct PlainOutput {
  // The model's text as it streams; -1: not shown (one-shot mode prints
  // the final answer itself).
  int text_fd = 1;
  // Tool calls, outcomes, notices and retries.
  int notice_fd = 2;
};
std::unique_ptr<Interaction> MakePlainInteraction(PlainOutput output);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_PLAIN_INTERACTION_H_
