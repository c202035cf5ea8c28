// Command-line parsing shared by the programs in cmd/: absl flags, spelled
// with dashes as the docs write them (--channel-fd), and a --help that lists
// the flags of the program's own main.cc.
#ifndef GARUDA_LIB_BASE_FLAGS_H_
#define GARUDA_LIB_BASE_FLAGS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace garuda {

// Sets `usage` as the program's usage message and parses argv (exits on
// --help or a bad flag, as absl does). "--channel-fd=3" is read as
// "--channel_fd=3". Returns the positional arguments, argv[0] first.
std::vector<std::string> ParseProgramFlags(int argc, char** argv,
                                           absl::string_view usage);

}  // namespace garuda

#endif  // GARUDA_LIB_BASE_FLAGS_H_
