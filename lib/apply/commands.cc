#include "lib/apply/commands.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/apply/apply.h"
#include "lib/apply/checks.h"
#include "lib/apply/outcome.h"
#include "lib/apply/signals.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"
#include "lib/changeset/beneath.h"
#include "lib/changeset/builder.h"
#include "lib/changeset/changeset.h"
#include "lib/question/choice.h"
#include "lib/question/question.h"
#include "lib/question/screen.h"

namespace garuda {
namespace {

// Marks an Open step's error as a usage error (exit 2, not 1).
constexpr char kUsagePayload[] = "garuda.dev/applier-usage";

absl::Status UsageError(absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kUsagePayload, absl::Cord());
  return status;
}

// show and apply read the change list on standard input, never a terminal.
absl::Status NeedsListOnInput(const ApplierCommand& command) {
  if (!::isatty(command.in)) return absl::OkStatus();
  return UsageError(
      "the change list comes on standard input; pipe it from garuda-stager "
      "or diff-dirs");
}

void Say(int fd, absl::string_view text) { (void)WriteAll(fd, text); }

absl::StatusOr<ApplierPlaces> Locate(const ApplierCommand& command) {
  return LocateApplierPlaces(command.project, command.undo_root);
}

absl::StatusOr<std::string> ProjectOf(const ApplierCommand& command) {
  return RealProjectRoot(command.project);
}

// The list on stdin, checked to be for this project.
absl::StatusOr<ChangeSet> ReadInput(const ApplierCommand& command,
                                    const std::string& project) {
  return ReadChangeSetForProject(command.in, "standard input", project);
}

// "No changes" for the model; what stayed in staging for the person.
void SayNoChanges(const ApplierCommand& command, const ChangeSet& change_set) {
  Say(command.out, absl::StrCat(kNoChangesLine, "\n"));
  std::string counts = IgnoredCounts(change_set);
  if (!counts.empty()) {
    Say(command.err, absl::StrCat("garuda-applier: ignored by git, kept in "
                                  "staging, not applied: ",
                                  counts, "\n"));
  }
}

int Fail(const ApplierCommand& command, const absl::Status& status) {
  Say(command.err, absl::StrCat("garuda-applier: ", status.message(), "\n"));
  return kExitError;
}

// A list that cannot be read is an error (exit 1), except one read whole
// whose content does not match its SHA-256: that list is refused for what
// it holds (exit 5), as the checks refuse one whose size does not match.
int FailInput(const ApplierCommand& command, const absl::Status& status) {
  if (!IsContentMismatch(status)) return Fail(command, status);
  Say(command.err, absl::StrCat("garuda-applier: refused; nothing was "
                                "written:\n  ",
                                status.message(), "\n"));
  Say(command.out, absl::StrCat("The changes were not applied: refused: ",
                                status.message(), "\n"));
  return kExitRefused;
}

// Test seam GARUDA_TEST_ONLY_APPLY_PAUSE=STEP:FD: before step STEP of an
// apply (1: after the check, the undo record, the journal and the
// temporaries, before the first rename; one past the last: after the
// commit, before the cleanup), "paused STEP" is written to FD and
// one byte is awaited on it: 'f' fails the apply there, anything else goes
// on. It lets a test act in that window (a save, a signal, a kill, a folder
// moved away) at a chosen point; it can only stop an apply, never widen
// what one may do.
std::function<absl::Status(int)> PauseSeam() {
  const char* value = std::getenv("GARUDA_TEST_ONLY_APPLY_PAUSE");
  int step = 0, fd = -1;
  if (value == nullptr || std::sscanf(value, "%d:%d", &step, &fd) != 2 ||
      fd < 0) {
    return nullptr;
  }
  return [step, fd](int number) -> absl::Status {
    if (number != step) return absl::OkStatus();
    (void)WriteAll(fd, absl::StrCat("paused ", number, "\n"));
    char answer = 0;
    ssize_t n;
    do {
      n = ::read(fd, &answer, 1);
    } while (n < 0 && errno == EINTR);
    if (n == 1 && answer == 'f') {
      return absl::InternalError(
          absl::StrCat("stopped at step ", number, " by the test seam"));
    }
    return absl::OkStatus();
  };
}

// What an interrupted apply of this project left is finished or reversed
// before anything else; each on a line of its own.
absl::Status RecoverFirst(const ApplierCommand& command,
                          const ApplierPlaces& places, int fd) {
  ASSIGN_OR_RETURN(std::vector<RecoveryResult> results,
                   RecoverInterruptedApplies(places.undo_root, places.project));
  for (const RecoveryResult& result : results) {
    Say(fd, absl::StrCat(fd == command.err ? "garuda-applier: " : "",
                         result.Line(), "\n"));
  }
  if (results.empty() && fd == command.out) Say(fd, "Nothing to recover\n");
  return absl::OkStatus();
}

int Report(const ApplierCommand& command, const ApplyResult& result,
           bool undo) {
  switch (result.outcome) {
    case ApplyOutcome::kApplied:
      return kExitApplied;
    case ApplyOutcome::kConflict:
      Say(command.err,
          absl::StrCat("garuda-applier: conflict: these paths changed in the "
                       "project since "
                       "the list was made; nothing was written:\n  ",
                       absl::StrJoin(result.problems, "\n  "), "\n"));
      Say(command.out, absl::StrCat(NotDoneLine(result, undo), "\n"));
      return kExitConflict;
    case ApplyOutcome::kRefused:
      Say(command.err,
          absl::StrCat("garuda-applier: refused; nothing was written:\n  ",
                       absl::StrJoin(result.problems, "\n  "), "\n"));
      Say(command.out, absl::StrCat(NotDoneLine(result, undo), "\n"));
      return kExitRefused;
  }
  return kExitError;
}

// The project and the undo store (apply, undo, recover).
absl::StatusOr<OpenedCommand> OpenPlaces(const ApplierCommand& command) {
  OpenedCommand opened;
  ASSIGN_OR_RETURN(opened.places, Locate(command));
  opened.project = opened.places->project;
  return opened;
}

// Both stay writable after the lockdown.
void NeedsPlaces(OpenedCommand& opened) {
  opened.needs.writable_paths = {opened.project, opened.places->undo_root};
}

}  // namespace

absl::StatusOr<OpenedCommand> OpenShow(const ApplierCommand& command) {
  RETURN_IF_ERROR(NeedsListOnInput(command));
  OpenedCommand opened;
  ASSIGN_OR_RETURN(opened.project, ProjectOf(command));
  ASSIGN_OR_RETURN(opened.root, OpenRoot(opened.project));
  return opened;
}

int RunShow(const ApplierCommand& command, OpenedCommand& opened) {
  const std::string& project = opened.project;
  const int root = opened.root.get();
  absl::StatusOr<ChangeSet> change_set = ReadInput(command, project);
  if (!change_set.ok()) return FailInput(command, change_set.status());
  if (change_set->NoChanges()) {
    SayNoChanges(command, *change_set);
    return kExitApplied;
  }
  // show writes nothing, so it cannot recover; it says what is waiting.
  absl::StatusOr<ApplierPlaces> places = Locate(command);
  if (places.ok()) {
    for (const std::string& id :
         PendingApplies(places->undo_root, places->project)) {
      Say(command.err,
          absl::StrCat("garuda-applier: apply ", id,
                       " in this project is running or was interrupted; "
                       "`garuda-applier recover` finishes or reverses it; "
                       "this diff compares with the project as it is now\n"));
    }
  }
  Rendered rendered = RenderChangeSet(*change_set, root);
  Say(command.out, absl::StrCat(rendered.summary, "\n", rendered.diff));
  // The same refusals as apply, and where each link leads once applied.
  std::vector<std::string> problems;
  CheckEntries(*change_set, &problems);
  std::vector<ResolvedLink> links;
  absl::Status checked = CheckLinks(*change_set, root, &links, &problems);
  if (!checked.ok()) return Fail(command, checked);
  if (!links.empty()) {
    std::string text = "\nLinks, resolved against the project as it will be:\n";
    for (const ResolvedLink& link : links) {
      absl::StrAppend(
          &text, "  ", VisiblePath(link.path), " -> ", VisiblePath(link.target),
          link.existing ? " (already in the project)" : "", ": ",
          link.inside
              ? absl::StrCat("leads to ", VisiblePath(link.resolved))
              : absl::StrCat("leads out of the project (", link.why, ")"),
          "\n");
    }
    Say(command.out, text);
  }
  if (!problems.empty()) {
    Say(command.out,
        absl::StrCat("\nRefused: apply would write nothing of this list:\n  ",
                     absl::StrJoin(problems, "\n  "), "\n"));
    return kExitRefused;
  }
  return kExitApplied;
}

absl::StatusOr<OpenedCommand> OpenApply(const ApplierCommand& command) {
  RETURN_IF_ERROR(NeedsListOnInput(command));
  ASSIGN_OR_RETURN(OpenedCommand opened, OpenPlaces(command));
  ASSIGN_OR_RETURN(opened.root, OpenRoot(opened.project));
  if (command.mode == ApplyMode::kAsk) {
    opened.tty = OpenFile(command.tty, O_RDWR | O_NOCTTY);
  }
  if (command.mode != ApplyMode::kDryRun) {
    RETURN_IF_ERROR(MakeDirectories(opened.places->undo_root, 0700));
    NeedsPlaces(opened);
  }
  return opened;
}

int RunApply(const ApplierCommand& command, OpenedCommand& opened) {
  const ApplierPlaces& places = *opened.places;
  const std::string& project = places.project;
  const std::string& undo_root = places.undo_root;
  const int root = opened.root.get();
  absl::StatusOr<UniqueFd>& tty = opened.tty;
  if (command.mode != ApplyMode::kDryRun) {
    absl::Status recovered = RecoverFirst(command, places, command.err);
    if (!recovered.ok()) return Fail(command, recovered);
  }
  absl::StatusOr<ChangeSet> change_set = ReadInput(command, project);
  if (!change_set.ok()) return FailInput(command, change_set.status());
  if (change_set->NoChanges()) {
    SayNoChanges(command, *change_set);
    return kExitApplied;
  }
  ApplyOptions options;
  options.project = project;
  options.undo_root = undo_root;
  options.before_step = PauseSeam();

  // An incomplete list is never applied: the question offers Discard only,
  // and --yes discards.
  bool incomplete = change_set->summary.incomplete();
  // A dry run, and the check before a question (no question for a list
  // that could not be applied). --yes needs no such check: the apply
  // itself checks first and writes nothing on a conflict or a refusal.
  if (!incomplete && command.mode != ApplyMode::kYes) {
    options.dry_run = true;
    absl::StatusOr<ApplyResult> check = ApplyChangeSet(*change_set, options);
    if (!check.ok()) return Fail(command, check.status());
    if (check->outcome != ApplyOutcome::kApplied ||
        command.mode == ApplyMode::kDryRun) {
      if (check->outcome == ApplyOutcome::kApplied) {
        Say(command.out,
            absl::StrCat("Would apply ", change_set->changes.size(),
                         " paths (dry run; nothing written)\n"));
      }
      return Report(command, *check, false);
    }
    options.dry_run = false;
  }
  if (command.mode == ApplyMode::kDryRun) {
    Say(command.out,
        absl::StrCat("Would discard: the list is incomplete (",
                     MakeVisible(change_set->summary.incomplete_reason()),
                     ")\n"));
    return kExitDiscarded;
  }
  ChangeAnswer answer;
  if (command.mode == ApplyMode::kAsk) {
    if (!tty.ok()) {
      Say(command.err, absl::StrCat("garuda-applier: --ask needs a terminal: ",
                                    tty.status().message(), "\n"));
    } else {
      Rendered rendered = RenderChangeSet(*change_set, root);
      AskOptions ask;
      ask.color = TerminalHasColors(tty->get());
      answer = AskChanges(*change_set, rendered, tty->get(), tty->get(), ask);
    }
  } else if (!incomplete) {
    answer.answer = Answer::kApply;
  } else {
    Say(command.err,
        absl::StrCat("garuda-applier: the list is incomplete (",
                     MakeVisible(change_set->summary.incomplete_reason()),
                     "); it can only be discarded\n"));
  }
  if (answer.answer == Answer::kDiscard) {
    Say(command.out, absl::StrCat(kDiscardedLine, "\n"));
    return kExitDiscarded;
  }
  // The person's own choice of files, made whole; the rest is discarded.
  std::optional<Choice> choice;
  if (answer.some) {
    choice = ChooseChanges(*change_set, answer.chosen);
    if (choice->applied.empty()) {
      Say(command.out, absl::StrCat(kDiscardedLine, "\n"));
      return kExitDiscarded;
    }
    *change_set = choice->chosen;
  }
  // A signal from here on waits until the apply is whole or put back and
  // its outcome is said; it is delivered when `deferred` ends.
  DeferredTerminationSignals deferred;
  absl::StatusOr<ApplyResult> result = ApplyChangeSet(*change_set, options);
  if (!result.ok()) return Fail(command, result.status());
  int code = Report(command, *result, false);
  if (code == kExitApplied) {
    Say(command.out,
        absl::StrCat(choice ? AppliedSomeLine(*choice) : kAppliedLine, "\n"));
    Say(command.err, absl::StrCat("garuda-applier: applied ", result->paths,
                                  " paths; to restore: garuda-applier undo ",
                                  result->undo_id, "\n"));
  }
  return code;
}

absl::StatusOr<OpenedCommand> OpenRecover(const ApplierCommand& command) {
  ASSIGN_OR_RETURN(OpenedCommand opened, OpenPlaces(command));
  RETURN_IF_ERROR(MakeDirectories(opened.places->undo_root, 0700));
  NeedsPlaces(opened);
  return opened;
}

int RunRecover(const ApplierCommand& command, OpenedCommand& opened) {
  DeferredTerminationSignals deferred;
  absl::Status recovered = RecoverFirst(command, *opened.places, command.out);
  if (!recovered.ok()) return Fail(command, recovered);
  return kExitApplied;
}

absl::StatusOr<OpenedCommand> OpenUndo(const ApplierCommand& command) {
  ASSIGN_OR_RETURN(OpenedCommand opened, OpenPlaces(command));
  if (!command.list) {
    NeedsPlaces(opened);
  }
  return opened;
}

int RunUndo(const ApplierCommand& command, OpenedCommand& opened) {
  const ApplierPlaces& places = *opened.places;
  const std::string& project = places.project;
  const std::string& undo_root = places.undo_root;
  if (command.list) {
    absl::StatusOr<std::vector<UndoRecordInfo>> records =
        ListUndoRecords(undo_root, project);
    if (!records.ok()) return Fail(command, records.status());
    if (records->empty())
      Say(command.out, "No applies recorded for this project\n");
    for (const UndoRecordInfo& record : *records) {
      std::string paths = absl::StrJoin(record.paths, " ");
      if (paths.size() > 200) paths = paths.substr(0, 200) + " ...";
      Say(command.out,
          absl::StrCat(
              record.id, "  ", record.paths.size(), " paths",
              record.undone_by.empty()
                  ? ""
                  : absl::StrCat(" (undone by ", record.undone_by, ")"),
              record.command.empty() ? "" : "  ", record.command, "\n    ",
              paths, "\n"));
    }
    return kExitApplied;
  }
  absl::Status recovered = RecoverFirst(command, places, command.err);
  if (!recovered.ok()) return Fail(command, recovered);
  ApplyOptions options;
  options.project = project;
  options.undo_root = undo_root;
  options.before_step = PauseSeam();
  DeferredTerminationSignals deferred;
  absl::StatusOr<ApplyResult> result = UndoApply(command.undo_id, options);
  if (!result.ok()) return Fail(command, result.status());
  int code = Report(command, *result, true);
  if (code == kExitApplied) {
    Say(command.out, absl::StrCat(UndoneLine(command.undo_id), "\n"));
    Say(command.err,
        absl::StrCat("garuda-applier: this undo is itself recorded as ",
                     result->undo_id, "\n"));
  }
  return code;
}

absl::StatusOr<OpenedCommand> OpenDiffDirs(const ApplierCommand& command) {
  if (::isatty(command.out)) {
    return UsageError(
        "diff-dirs writes a binary change list; pipe it to `garuda-applier "
        "show` or `apply`");
  }
  OpenedCommand opened;
  ASSIGN_OR_RETURN(opened.project, ProjectOf(command));
  return opened;
}

int RunDiffDirs(const ApplierCommand& command, OpenedCommand& opened) {
  BuildOptions options;
  options.project = opened.project;
  options.command = command.command;
  options.file_limit = command.file_limit;
  absl::StatusOr<ChangeSet> change_set =
      command.upper.empty() ? BuildFromCopy(command.staged, options)
                            : BuildFromOverlayUpper(command.upper, options);
  if (!change_set.ok()) return Fail(command, change_set.status());
  absl::Status written =
      WriteChangeSet(*change_set, command.out, "standard output");
  if (!written.ok()) return Fail(command, written);
  return kExitApplied;
}

int FailApplierCommand(const ApplierCommand& command,
                       const absl::Status& status) {
  Fail(command, status);
  return status.GetPayload(kUsagePayload).has_value() ? kExitUsage : kExitError;
}

}  // namespace garuda
