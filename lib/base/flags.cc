#include "lib/base/flags.h"

#include <algorithm>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"

namespace garuda {

std::vector<std::string> ParseProgramFlags(int argc, char** argv,
                                           absl::string_view usage) {
  absl::SetProgramUsageMessage(usage);
  // absl's --help lists flags of <program>.cc; ours live in
  // cmd/<program>/main.cc.
  absl::FlagsUsageConfig config;
  config.contains_help_flags = [](absl::string_view file) {
    return absl::StartsWith(file, "cmd/") && absl::EndsWith(file, "/main.cc");
  };
  config.contains_helpshort_flags = config.contains_help_flags;
  absl::SetFlagsUsageConfig(config);

  std::vector<std::string> storage(argv, argv + argc);
  for (size_t index = 1; index < storage.size(); ++index) {
    std::string& arg = storage[index];
    if (arg == "--") break;  // what follows is not ours
    if (arg.rfind("--", 0) != 0) continue;
    const size_t end = std::min(arg.find('='), arg.size());
    std::replace(arg.begin() + 2, arg.begin() + end, '-', '_');
  }
  std::vector<char*> pointers;
  for (std::string& arg : storage) pointers.push_back(arg.data());
  std::vector<char*> positional = absl::ParseCommandLine(
      static_cast<int>(pointers.size()), pointers.data());
  return std::vector<std::string>(positional.begin(), positional.end());
}

}  // namespace garuda
