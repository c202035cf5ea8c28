// The bubblewrap command line equivalent to a SandboxPolicy, for the tests
// that compare our sandbox with bwrap (the reference for behaviour) and for
// the benchmark. Not used to run commands.
#ifndef GARUDA_SANDBOX_BWRAP_ARGS_H_
#define GARUDA_SANDBOX_BWRAP_ARGS_H_

#include <string>
#include <vector>

#include "proto/sandbox_policy.pb.h"

namespace garuda {

class StoredWalk;

// The path of bwrap, or empty when it is not installed.
std::string FindBwrap();

// bwrap's arguments up to and including "--": the same namespaces, binds,
// private /tmp, /proc and /dev, denied paths (an empty 0000 read-only tmpfs
// over folders, /dev/null over files), environment and working folder, no
// capabilities, and the seccomp filter read from `seccomp_fd` (compiled
// BPF; -1 for none). What denyPrivateUnder hides comes from a walk at each
// call, or from `stored` (sandbox/stored_walk.h) when it is given.
std::vector<std::string> BwrapArgsFor(const std::string& bwrap,
                                      const SandboxPolicy& policy,
                                      int seccomp_fd,
                                      const StoredWalk* stored = nullptr);

}  // namespace garuda

#endif  // GARUDA_SANDBOX_BWRAP_ARGS_H_
