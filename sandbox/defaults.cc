#include "sandbox/defaults.h"

#include <cstdio>
#include <cstdlib>

#include "lib/base/json_message.h"

namespace garuda {

extern const char kSandboxDefaultsJson[];

const SandboxDefaults& DefaultSandboxSettings() {
  static const SandboxDefaults* defaults = [] {
    auto* parsed = new SandboxDefaults;
    absl::Status status = ParseJsonMessage(
        kSandboxDefaultsJson, "policies/sandbox/defaults.json", parsed);
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
      std::abort();
    }
    return parsed;
  }();
  return *defaults;
}

}  // namespace garuda
