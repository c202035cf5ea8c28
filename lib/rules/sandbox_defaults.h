// The defaults of policies/sandbox/defaults.json, compiled into the program
// so that a command cannot change the walls of the next one by editing a
// file.
#ifndef GARUDA_SANDBOX_DEFAULTS_H_
#define GARUDA_SANDBOX_DEFAULTS_H_

#include "proto/sandbox_policy.pb.h"

namespace garuda {

// Parsed once; a broken file is a build-time mistake and CHECK-fails (the
// unit test parses it too).
const SandboxDefaults& DefaultSandboxSettings();

}  // namespace garuda

#endif  // GARUDA_SANDBOX_DEFAULTS_H_
