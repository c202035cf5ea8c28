// The help text of garuda-applier, one block per subcommand (main.cc's
// table puts them in order).
#ifndef GARUDA_CMD_GARUDA_APPLIER_HELP_H_
#define GARUDA_CMD_GARUDA_APPLIER_HELP_H_

namespace garuda::applier_help {

inline constexpr char kIntro[] =
    R"(applies a command's change list to the project.

The change list (a ChangeSet stream) comes on standard input, from
`garuda-stager run --mode staged` or `garuda-applier diff-dirs`.

)";

inline constexpr char kShow[] =
    R"(  garuda-applier show [--project DIR] < changes
      the change as the question shows it: file list with counts, diff with
      hidden characters made visible (cut at 60 000 characters)
)";

inline constexpr char kApply[] =
    R"(  garuda-applier apply [--project DIR] (--ask | --yes | --dry-run) < changes
      conflict check, then all or nothing; --ask asks on /dev/tty with one
      key: a apply, d discard, c choose files (a or d for each, then the
      chosen ones are applied all or nothing and the rest discarded),
      v view in the pager (space/b page, / search, q quit); Ctrl-C or end
      of input discards. A list that garuda-agent -p kept in its session
      folder (~/.garuda/sessions/ID/staged/N.changeset) is reviewed so.
)";

inline constexpr char kUndo[] =
    R"(  garuda-applier undo [--project DIR] (--list | ID)
      list the recorded applies, or restore the project as it was before one
)";

inline constexpr char kServe[] =
    R"(  garuda-applier serve --channel-fd=N [--project DIR] [--undo-root DIR]
                       [--consent rules|terminal|relayed] [--terminal TTY]
                       [--apply-staged]
                       [--job FILE]
      serve garuda-agent's session channel (proto/applier_service.proto):
      ApplyChangeSet (the list in a sealed memfd passed with the request;
      the applier decides itself: it asks the person on the terminal, or
      applies only what an allow rule of the settings permits) and
      UndoApply (an undo id, or the session's last apply); with
      --apply-staged (rules only) a command's changes are applied without
      a question unless a rule denies or asks about one of their paths;
      with --job FILE (a job's applier, garuda-agent run) the job's rules
      are added and any change list with a path outside the job file's
      writeScope is refused
)";

inline constexpr char kRecover[] =
    R"(  garuda-applier recover [--project DIR] [--undo-root DIR]
      finish or reverse an apply that was interrupted (a kill, a crash, a
      power loss) and say which; apply and undo do this first on their own
)";

inline constexpr char kDiffDirs[] =
    R"(  garuda-applier diff-dirs [--project DIR] (--staged COPY | --upper UPPER)
                           [--command TEXT] [--file-limit N] > changes
      the change list of a staged copy or of an overlay upper layer
)";

inline constexpr char kOutro[] = R"(
Every subcommand takes --accept-weaker-lockdown=WHY to run on a kernel
without Landlock or seccomp.

Exit codes: 0 applied (or no changes; recover: done, the line on standard
output says "finished" or "reversed"), 1 error, 2 usage, 3 discarded,
4 conflict (nothing written), 5 refused (nothing written).)";

}  // namespace garuda::applier_help

#endif  // GARUDA_CMD_GARUDA_APPLIER_HELP_H_
