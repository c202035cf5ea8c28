// One meaning per key, for every question Garuda asks a person: the
// permission question (the agent's, the applier's and the stager's), the
// change question of a staged command and its per-file choice. Every prompt
// is made from this table, so a key cannot mean "apply" in one question and
// "yes, and don't ask again" in the next (docs/staged-commands.md, "Keys").
#ifndef GARUDA_LIB_QUESTION_KEYS_H_
#define GARUDA_LIB_QUESTION_KEYS_H_

#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace garuda {

struct KeyMeaning {
  char key;
  const char* word;     // the whole word also accepted from a pipe: "apply"
  const char* label;    // in prompts: "[a]pply"
  const char* meaning;  // for the documentation and the help line
};

// The table. A question offers a subset of it; a key not offered is no
// answer (the question is asked again), never another meaning.
inline constexpr KeyMeaning kQuestionKeys[] = {
    {'y', "yes", "[y]es", "yes: allow this one call"},
    {'s', "session", "[s]ession",
     "yes, and allow the same calls for the rest of this session"},
    {'n', "no", "[n]o", "no: do not allow this call"},
    {'a', "apply", "[a]pply",
     "apply: the changes (or, while choosing, this file) go to the project"},
    {'d', "discard", "[d]iscard",
     "discard: the changes (or, while choosing, this file) do not go to the "
     "project"},
    {'c', "choose", "[c]hoose files",
     "choose: decide file by file which changes to apply"},
    {'v', "view", "[v]iew",
     "view: the whole diff (or this file's) in the pager"},
    {'r', "rest", "[r]est too",
     "rest: while choosing, apply this file and every file after it"},
    {'q', "quit", "[q]uit choosing",
     "quit: while choosing, discard this file and every file after it"},
};

// The entry of `key`, or nullptr when the table has none.
const KeyMeaning* FindKey(char key);

// "[a]pply, [d]iscard, [v]iew" for `keys` (each must be in the table).
std::string KeyPrompt(absl::Span<const char> keys);

// The key a line typed on a pipe means among `offered`: its one letter, or
// the whole word of the table ("apply"), any case; 0 when it means none.
char KeyOfWord(absl::string_view line, absl::Span<const char> offered);

}  // namespace garuda

#endif  // GARUDA_LIB_QUESTION_KEYS_H_
