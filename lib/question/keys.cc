#include "lib/question/keys.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace garuda {

const KeyMeaning* FindKey(char key) {
  for (const KeyMeaning& meaning : kQuestionKeys) {
    if (meaning.key == key) return &meaning;
  }
  return nullptr;
}

std::string KeyPrompt(absl::Span<const char> keys) {
  std::string prompt;
  for (char key : keys) {
    const KeyMeaning* meaning = FindKey(key);
    if (meaning == nullptr) std::abort();  // a programmer's error
    absl::StrAppend(&prompt, prompt.empty() ? "" : ", ", meaning->label);
  }
  return prompt;
}

char KeyOfWord(absl::string_view line, absl::Span<const char> offered) {
  std::string word = absl::AsciiStrToLower(absl::StripAsciiWhitespace(line));
  for (char key : offered) {
    const KeyMeaning* meaning = FindKey(key);
    if (meaning == nullptr) continue;
    if (word.size() == 1 && word[0] == key) return key;
    if (word == meaning->word) return key;
  }
  return 0;
}

}  // namespace garuda
