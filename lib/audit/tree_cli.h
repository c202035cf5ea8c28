// The tree's commands of garuda-audit (docs/audit.md, "Commands"): each
// prints to `out`, says what went wrong on `err`, and returns the exit
// status (0 done, 1 a check failed, 2 a usage error or unreadable input).
#ifndef GARUDA_LIB_AUDIT_TREE_CLI_H_
#define GARUDA_LIB_AUDIT_TREE_CLI_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace garuda {

// The tree folder of a project (~/.garuda/audit/<project key>/tree).
absl::StatusOr<std::string> ProjectTreeFolder(const std::string& project);

// `key generate`: `fd` is the new key file (CreateSigningKeyFile), made
// before the lockdown. Prints the verifier key as the last line.
int RunKeyGenerate(int fd, const std::string& name, const std::string& path,
                   FILE* out, FILE* err);
// `checkpoint`: the latest signed checkpoint, as it is stored.
int RunCheckpoint(const std::string& tree_folder, FILE* out, FILE* err);
// `leaves`: the first `size` leaves (default: all), one log line per line.
int RunLeaves(const std::string& tree_folder, std::optional<uint64_t> size,
              FILE* out, FILE* err);
// `prove inclusion` and `prove consistency`: one base64 hash per line.
int RunProveInclusion(const std::string& tree_folder, uint64_t index,
                      uint64_t size, FILE* out, FILE* err);
int RunProveConsistency(const std::string& tree_folder, uint64_t old_size,
                        uint64_t size, FILE* out, FILE* err);

// Every value of a flag that may be given more than once (`--log A --log
// B`, `--log=A`): absl keeps only the last.
std::vector<std::string> RepeatedFlagValues(int argc, char** argv,
                                            const std::string& flag);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_TREE_CLI_H_
