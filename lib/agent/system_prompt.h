// The system prompt of a session: who the model works for, its tools, and
// how commands and edits reach the project in this session's mode.
#ifndef GARUDA_LIB_AGENT_SYSTEM_PROMPT_H_
#define GARUDA_LIB_AGENT_SYSTEM_PROMPT_H_

#include <string>

namespace garuda {
namespace agent {

struct PromptFacts {
  std::string project;  // the root folder
  bool staged = false;
  bool sandboxed = true;
  bool strict = false;
};

std::string SystemPrompt(const PromptFacts& facts);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_SYSTEM_PROMPT_H_
