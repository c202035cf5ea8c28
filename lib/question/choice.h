// The per-file choice of the change question (spec T5, decision Q2 as
// built now): the changes a person chose, made into a list that can be
// applied on its own, all or nothing, with the same conflict check.
#ifndef GARUDA_LIB_QUESTION_CHOICE_H_
#define GARUDA_LIB_QUESTION_CHOICE_H_

#include <string>
#include <vector>

#include "lib/changeset/changeset.h"

namespace garuda {

struct Choice {
  // The whole list's header and summary, with the chosen changes only.
  ChangeSet chosen;
  // Paths (as in the list, not made visible) of the changes applied and
  // of every other one, which is discarded.
  std::vector<std::string> applied;
  std::vector<size_t> indices;  // of the applied changes in the whole list
  std::vector<std::string> discarded;
  // Chosen changes that cannot go without one that was not chosen, each
  // with why ("src/new/x.c: its folder src/new is made by a change that
  // is discarded"); they are discarded too.
  std::vector<std::string> left_out;
};

// The changes of `change_set` at the indices `chosen`, made whole: a change
// beneath a folder that only the list makes (a new folder, or a path that
// becomes a folder) needs that change too; a change that removes a folder
// (deleted, replaced, turned into a file or link) needs every change
// beneath it. Where one is missing, what needs it is left out: what the
// person discarded stays discarded. Indices out of range are ignored.
Choice ChooseChanges(const ChangeSet& change_set,
                     const std::vector<size_t>& chosen);

// The line the model receives when the chosen files were applied: names
// both the applied and the discarded paths.
std::string AppliedSomeLine(const Choice& choice);

}  // namespace garuda

#endif  // GARUDA_LIB_QUESTION_CHOICE_H_
