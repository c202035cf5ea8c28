// The recovery journal of an apply: what the apply will do to the project,
// written and synced before its first rename, so that an apply cut short by
// what cannot be caught (SIGKILL, a crash, a power loss) is finished or
// reversed at the applier's next start in that project.
//
// The journal is the plan, not a log of each step: every step is a rename,
// a mkdir or a chmod, each atomic, so recovery looks at the project to see
// which steps happened (the new content or the old one at a path, a
// temporary still there or not) and needs no write per step. The undo
// record beside the journal holds both fingerprints of every path.
//
// File: <undo folder>/<id>/journal, lines of tab-separated fields, paths
// C-escaped:
//   garuda-apply-journal 1 <tab> <work folder name>
//   temp <tab> <folder> <tab> <name>          a temporary made before the plan
//   step <tab> <kind> <tab> <path> <tab> <temp> <tab> <in work> <tab> <mode>
//                 <tab> <old mode>
//   committed                                  every step done and synced
#ifndef GARUDA_LIB_APPLY_JOURNAL_H_
#define GARUDA_LIB_APPLY_JOURNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"

namespace garuda {
namespace apply_internal {

enum class StepKind {
  kMoveAside,   // path -> <work>/<temp>: a removal or a type change
  kExchange,    // <temp> <-> path (RENAME_EXCHANGE): a replaced file or link
  kPlace,       // <temp> -> path (RENAME_NOREPLACE): a new file or link
  kMakeFolder,  // mkdir path, chmod mode
  kChangeMode,  // chmod path from old_mode to mode (a folder)
};

struct PlannedStep {
  StepKind kind;
  std::string path;           // in the project
  std::string temp;           // the aside or temporary name
  bool temp_in_work = false;  // temp is in the work folder, else beside path
  uint32_t mode = 0;
  uint32_t old_mode = 0;
};

struct PlannedTemp {
  std::string folder;  // relative to the root ("" is the root)
  std::string name;
};

struct JournalPlan {
  std::string work_name;  // the work folder at the root
  std::vector<PlannedTemp> temps;
  std::vector<PlannedStep> steps;
  bool committed = false;
};

inline constexpr char kJournalName[] = "journal";

// Writes the plan to <record>/journal, synced with its folder, before the
// apply makes anything in the project (its temporaries included). The open
// journal is returned for MarkCommitted.
absl::StatusOr<UniqueFd> WriteJournal(const std::string& record,
                                      const JournalPlan& plan);

// Appends "committed" and syncs it: from here recovery finishes the apply.
absl::Status MarkCommitted(int journal_fd, const std::string& record);

// Reads <record>/journal. NOT_FOUND when there is none; a damaged journal
// names the file and line.
absl::StatusOr<JournalPlan> ReadJournal(const std::string& record);

}  // namespace apply_internal
}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_JOURNAL_H_
