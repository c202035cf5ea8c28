#include "lib/rules/sandbox_defaults.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace garuda {

// sandbox_defaults_embedded.cc (//lib/rules:sandbox_defaults_embedded): the binary encoding of
// policies/sandbox/defaults.json, checked against the schema at build time.
extern const char kSandboxDefaults[];
extern const size_t kSandboxDefaultsSize;

const SandboxDefaults& DefaultSandboxSettings() {
  static const SandboxDefaults* defaults = [] {
    auto* parsed = new SandboxDefaults;
    if (!parsed->ParseFromArray(kSandboxDefaults,
                                static_cast<int>(kSandboxDefaultsSize))) {
      std::fprintf(stderr,
                   "the compiled-in policies/sandbox/defaults.json does not "
                   "decode\n");
      std::abort();
    }
    return parsed;
  }();
  return *defaults;
}

}  // namespace garuda
