// The JSON files of policies/seccomp/, compiled into the binary by a genrule
// (embedded_policies.cc), so that a program never reads its own filter from
// a file someone could change.
#ifndef GARUDA_LIB_LOCKDOWN_EMBEDDED_POLICIES_H_
#define GARUDA_LIB_LOCKDOWN_EMBEDDED_POLICIES_H_

#include <cstddef>

namespace garuda {

struct EmbeddedPolicy {
  const char* name;  // the file name without ".json"
  const char* json;
  // The same policy as a binary SeccompPolicy (//tools:embed_message),
  // decoded at start: protobuf's JSON reader costs a few milliseconds of
  // every program's start.
  const char* binary;
  size_t binary_size;
};

// The table, sorted by name, and its length.
extern const EmbeddedPolicy kEmbeddedSeccompPolicies[];
extern const size_t kEmbeddedSeccompPolicyCount;

}  // namespace garuda

#endif  // GARUDA_LIB_LOCKDOWN_EMBEDDED_POLICIES_H_
