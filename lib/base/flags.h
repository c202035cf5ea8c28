// Command-line parsing shared by the programs in cmd/: absl flags, spelled
// with dashes as the docs write them (--channel-fd), the conventions people
// expect of a command-line program, and its help listing the flags of the
// program's own main.cc.
#ifndef GARUDA_LIB_BASE_FLAGS_H_
#define GARUDA_LIB_BASE_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace garuda {

// The exit code of a usage mistake (a bad flag, a missing argument), the
// same in every program.
inline constexpr int kExitUsageError = 2;

// Sets `usage` as the program's usage message and parses argv:
// - `--help` or `-h`: the usage and the program's flags on standard output,
//   exit 0; `--version`: "<program> <version>", exit 0;
// - `--name=value`, `--name value`, `-name`, `--bool-flag`, `--nobool-flag`;
//   dashes and underscores in names are the same ("--channel-fd" is the flag
//   channel_fd); everything after `--` is positional;
// - an unknown flag or a bad value: one line on standard error ("unknown
//   flag --base-ur; did you mean --base-url?", and where --help is), exit 2.
// Returns the positional arguments, argv[0] first.
std::vector<std::string> ParseProgramFlags(int argc, char** argv,
                                           absl::string_view usage);

// The same without exiting: the positional arguments, or INVALID_ARGUMENT
// with the line to print; `--help` and `--version` give their text in
// `*exit_text` and return an empty list.
absl::StatusOr<std::vector<std::string>> ParseFlags(
    const std::vector<std::string>& args, std::string* exit_text);

// Exits with kExitUsageError, naming the flag, when `value` (a folder given
// with --`flag`) is set and is not a folder: "--project /x/y: no such
// folder". An empty value (the flag not given) passes.
void RequireFolderFlag(absl::string_view program, absl::string_view flag,
                       const std::string& value);

// The help text: `usage`, then each flag of cmd/<program>/main.cc with its
// default and help, spelled with dashes.
std::string ProgramHelp(absl::string_view program, absl::string_view usage);

}  // namespace garuda

#endif  // GARUDA_LIB_BASE_FLAGS_H_
