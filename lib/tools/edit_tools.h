// edit_file and write_file: they never write. Each makes a one-file change
// list with the base fingerprint of the file as it was read, for
// garuda-applier (so a file the person changed meanwhile is a conflict,
// not an overwrite), and the text the question shows.
#ifndef GARUDA_LIB_TOOLS_EDIT_TOOLS_H_
#define GARUDA_LIB_TOOLS_EDIT_TOOLS_H_

#include <string>

#include "absl/status/statusor.h"
#include "lib/changeset/changeset.h"
#include "lib/tools/definitions.h"
#include "lib/tools/project.h"

namespace garuda {

struct ProposedEdit {
  std::string relative;  // the file, relative to the project root
  ChangeSet change_set;  // one entry, its new content in memory
  int replacements = 0;  // edit_file: how many places changed
  // For the question: the file list line, then the diff with hidden
  // characters made visible (lib/question).
  std::string question_text;
};

// A path through a symbolic link, or one whose folder is not a folder, is
// an error naming it: the applier writes no path through a link.
absl::StatusOr<ProposedEdit> ProposeEditFile(const Project& project,
                                             const EditFileInput& input);
absl::StatusOr<ProposedEdit> ProposeWriteFile(const Project& project,
                                              const WriteFileInput& input);

}  // namespace garuda

#endif  // GARUDA_LIB_TOOLS_EDIT_TOOLS_H_
